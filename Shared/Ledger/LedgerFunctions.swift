import Foundation
import Pipeline
package import Redis

/// Typed calls of the `tollgate_ledger_v9` Redis Function library: `Lua/ledger_events.lua` (the outbound events,
/// schema v2, docs/EVENTS.md), `Lua/ledger_records.lua` (records, entitlements, refunds),
/// `Lua/ledger_transactions.lua` (one transaction, renewals, validation, forwarding), `Lua/ledger_spend.lua`
/// (spending coins: ``CoinSpend``), `Lua/ledger.lua` (the functions) and `Lua/ledger_grants.lua` (labelled grants:
/// ``LedgerGrants``), joined in that order after the
/// shared part.
///
/// - `ledger_v9_apply` KEYS: verified stream, job hash, events stream, account, ledger meta,
///   transactions zset, notifications set, plan keys…  ARGV: group, entry id, plan JSON → outcome JSON.
///   Checks the owner still resolves as planned (else `reresolve`, nothing written), the bindings of every
///   `originalTransactionId`, the order; then `XACK`s the entry and — only if that returned 1 — writes the
///   transaction records, balance, entitlements, bindings, order, job status (+ `PUBLISH`) and outbound events.
/// - `ledger_v9_park` KEYS: verified stream, job hash, binding/token/parked keys… (and the events stream for a V2
///   notification about no purchase)  ARGV: group, entry id, plan JSON → outcome JSON. Parks an event whose owner
///   is unknown (or `reresolve` when one appeared); an event with nothing to park is finished, and a V2
///   notification among them emitted on the events stream as one app-level entry (`emitted`).
/// - `ledger_v9_grant`, `ledger_v9_revoke`, `ledger_v9_expire_grant` KEYS: account, ledger meta, grants hash, grants
///   due zset, events stream, the user's event log, the user's recently revoked grants (and an idempotency key for
///   `grant`)  ARGV: request JSON → answer JSON (``LedgerGrants``).
/// - `ledger_v9_spend` KEYS: the calling key's idempotency record, the user's event log, the events stream, account,
///   the sandbox side's account and log, the tester mark, the previous release's record (read only).
///   ARGV: user, amount, reason, idempotency key, by, now, record TTL, log cap, log TTL → outcome JSON
///   (``CoinSpend``). Never below zero; one debit and one `coins.spent` event per idempotency key.
///
/// Redis Cluster: every key of one call is in one partition's slot (docs/CLUSTER.md); a chain or token of
/// another partition enters the plan as a value, and claiming it is a step of its own (`claim`).
package enum LedgerFunctions {
    /// The library; a later contract gets a new version (3: the plan's `rtype`/`rpct`, prorated refunds, the
    /// record's `rtype`/`rpct` and `refunds` keys with a share; 4: partitions — chains and tokens of other slots as
    /// plan values, `claim`, `hand_over`, `handed_over`; 5: offers — a promotional redemption's `offer`/`osig` and its
    /// `signals`, an introductory period's `group`/`intro`/`trial` and the plan's `trials`, the withheld entitlement
    /// value `2`; 6: schema-v2 events — `seq`, `id` and the `event` JSON on every events entry, the user's event log
    /// `ulog`/`ulogCap`/`ulogTtl`, the app-level sequence `appSeq`/`scope`, revenue facts `price`/`cur`/`sf`/
    /// `otype`/`oid` on the plan's transactions and their records; 7: the customer API — the transaction owner
    /// index `txo`, the renewal's `aprod`/`intent`/`winback`; labelled grants — `grant`, `revoke`, `expire_grant`, the
    /// account's `coins.granted` (lowered by a debit that takes the balance below it) and the ledger meta's
    /// `grants.coins`; `spend` — coins spent by a service, the account's `coins.spent`, the idempotency record
    /// `spend:<key>`, the event type `coins.spent` and its `amount`/`idempotencyKey`/`by`, events without
    /// `store`/`environment` when the plan has no `env`, and the plan's own event type `etype`; 8: the user's sandbox
    /// side — the plan's `side`, events' `side` and their own sequence, `spend` over both sides, `clear_sandbox`; 9: testers — `spend` counts the sandbox side only for a tester or when
    /// told to (its tester mark in KEYS, a policy in ARGV), `tester_add`, `tester_remove`, events `tester.added` and
    /// `tester.removed`; issue 42, item 9: `grant` compares a reused idempotency key's body (`conflict`) and answers a
    /// replay's `state`, the revoked grants set `grants:revoked` in KEYS of `grant`/`revoke`/`expire_grant`; item 12:
    /// the spend record `spend-by:<name>:<key>`, the previous `spend:<key>` read as a fallback).
    package static let library = RedisFunctionLibrary(
        "ledger", version: 9,
        functions: [
            "apply", "park", "claim", "hand_over", "handed_over", "grant", "revoke", "expire_grant", "spend", "clear_sandbox",
            "tester_add", "tester_remove",
        ],
        parts: [
            SharedLua.common, SharedLua.jobs, PackageResources.ledger_events_lua, PackageResources.ledger_records_lua,
            PackageResources.ledger_transactions_lua, PackageResources.ledger_spend_lua,
            PackageResources.ledger_lua, PackageResources.ledger_grants_lua, PackageResources.ledger_sides_lua,
            PackageResources.ledger_testers_lua,
        ])

    static func call(
        _ function: String, on redis: any RedisCommandExecutor, keys: [String], group: String, id: String,
        plan: [UInt8]
    ) async throws -> LedgerOutcome {
        let reply = try await library.call(function, on: redis, keys: keys, arguments: [group, id, plan])
        guard let bytes = reply.bytes else {
            throw LedgerError.unexpectedReply("\(library.function(function)) returned \(reply)")
        }
        do {
            return try LedgerOutcome(json: bytes)
        } catch {
            throw LedgerError.unexpectedReply("\(function) returned \(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
