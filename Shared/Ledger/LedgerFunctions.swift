import Foundation
import Redis

/// Typed calls of the `tollgate_ledger_v2` Redis Function library (source in ``librarySource``).
///
/// - `tg_ledger_v2_apply` KEYS: verified stream, job hash, events stream, account, ledger meta,
///   transactions zset, notifications set, plan keys…  ARGV: group, entry id, plan JSON → outcome JSON.
///   Checks the owner still resolves as planned (else `reresolve`, nothing written), the bindings of every
///   `originalTransactionId`, the order; then `XACK`s the entry and — only if that returned 1 — writes the
///   transaction records, balance, entitlements, bindings, order, job status (+ `PUBLISH`) and outbound events.
/// - `tg_ledger_v2_park` KEYS: verified stream, job hash, binding/token/parked keys…  ARGV: group, entry id,
///   plan JSON → outcome JSON. Parks an event whose owner is unknown (or `reresolve` when one appeared).
///
/// Redis Cluster: the user's keys share the tag `{u:<user>}`, but one call also touches the verified
/// stream, job hash and events stream (`{p0}`, as the pipeline contract places them) and the bindings
/// (`{otx:<originalTransactionId>}`). That is atomic on one primary, the default deployment. On a Cluster
/// these calls would be refused as cross-slot: the events would have to be partitioned per user slot and the
/// binding made a separate first step — not built.
public enum LedgerFunctions {
    public static let libraryName = "tollgate_ledger_v2"
    public static let applyFunction = "tg_ledger_v2_apply"
    public static let parkFunction = "tg_ledger_v2_park"

    /// Loads (or replaces) the library.
    public static func load(on redis: any RedisCommandExecutor) async throws {
        let name = try await redis.functionLoad(librarySource)
        guard name == libraryName else {
            throw LedgerError.unexpectedReply("loaded library is named \(name), expected \(libraryName)")
        }
    }

    static func call(
        _ function: String, on redis: any RedisCommandExecutor, keys: [String], group: String, id: String,
        plan: [UInt8]
    ) async throws -> LedgerOutcome {
        let reply = try await redis.fcall(function, keys: keys, arguments: [group, id, plan])
        guard let bytes = reply.bytes else { throw LedgerError.unexpectedReply("\(function) returned \(reply)") }
        do {
            return try JSONDecoder().decode(LedgerOutcome.self, from: Data(bytes))
        } catch {
            throw LedgerError.unexpectedReply("\(function) returned \(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
