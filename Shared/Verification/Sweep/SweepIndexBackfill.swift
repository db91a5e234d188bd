import Foundation
import Ledger
import Pipeline
import Redis

/// Puts the subscriptions a ledger held before its apply function kept the sweep index into that index, once
/// per deployment (marker `index.backfilled` in ``Keys/reconcileStatus``, written fenced by the lease). It
/// scans every account (`SCAN MATCH` ``Keys/accountPattern``) and adds, into the index of the user's partition
/// (``Keys/partition(ofUser:)``, where the apply function writes it too), like the apply function would, each
/// entitlement that is `active` or `gracePeriod`, or `expired` with auto-renew on, whose entitlement hash holds
/// a subscription period (a row with an `expiresDate`): score its `ent:<name>:expires`, reference its latest
/// transaction. `ZADD NX`/`HSETNX`: whatever the apply function wrote meanwhile wins.
struct SweepIndexBackfill: Sendable {
    let context: ReconcileContext

    static let markerField = "index.backfilled"

    /// Runs the backfill unless it ran before; returns how many subscriptions it added.
    func runOnce(lease: String) async throws -> Int {
        let keys = context.keys
        if try await context.redis.send("HEXISTS", key: keys.reconcileStatus, Self.markerField).int == 1 { return 0 }
        var added = 0
        try await context.redis.scanKeys(match: keys.accountPattern) { found in
            for key in found {
                guard let user = keys.user(ofAccountKey: key) else { continue }
                added += try await backfill(user: user, account: try await context.hash(key))
            }
        }
        guard
            try await ReconcileFunctions.write(
                on: context.redis, lease: keys.reconcileLease, token: lease, hash: keys.reconcileStatus,
                fields: [(Self.markerField, String(context.clock.nowMilliseconds()))])
        else { throw VerificationError.leaseLost }
        return added
    }

    private func backfill(user: String, account: [String: String]) async throws -> Int {
        var added = 0
        for (field, state) in account where field.hasPrefix("ent:") && field.hasSuffix(":state") {
            let name = String(field.dropFirst(4).dropLast(6))
            let autoRenew = account[EntitlementsView.Field.autoRenew(name)] == "1"
            guard !name.isEmpty, state == "active" || state == "gracePeriod" || (state == "expired" && autoRenew),
                let due = account[EntitlementsView.Field.expires(name)].flatMap({ Int64($0) }),
                let latest = try await latestPeriod(user: user, entitlement: name)
            else { continue }
            let environment =
                try await context.redis.send(
                    "HGET", key: context.keys.transaction(user: user, transactionId: latest), "env"
                ).string ?? ""
            guard !environment.isEmpty,
                let member = String(data: try JSONEncoder().encode([environment, name, user]), encoding: .utf8)
            else { continue }
            let partition = context.keys.partition(ofUser: user)
            let created = try await context.redis.send(
                RedisCommand("ZADD", key: context.keys.subscriptionsDue(partition: partition), "NX", due, member))
            _ = try await context.redis.send(
                RedisCommand("HSETNX", key: context.keys.subscriptionsDueReference(partition: partition), member, latest))
            if created.int == 1 { added += 1 }
        }
        return added
    }

    /// The active, not upgraded subscription period with the latest `expiresDate` in the entitlement hash
    /// (values `active,purchaseMs,expiresMs,upgraded`); nil when it holds none (not a subscription).
    private func latestPeriod(user: String, entitlement: String) async throws -> String? {
        let flat = try await context.redis.send("HGETALL", key: context.keys.entitlement(user: user, name: entitlement)).array ?? []
        var best: (tid: String, expires: Int64)?
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard let tid = flat[index].string, let parts = flat[index + 1].string?.split(separator: ","), parts.count == 4,
                parts[0] == "1", parts[3] != "1", let expires = Int64(parts[2]), expires > 0
            else { continue }
            if expires > (best?.expires ?? 0) { best = (tid, expires) }
        }
        return best?.tid
    }
}
