import Core
package import Pipeline
package import Redis

/// An operator clearing a user's sandbox side (``LedgerSide``; `tollctl sandbox clear`): one call of
/// `ledger_v8_clear_sandbox` (`Lua/ledger_sides.lua`) in the user's slot deletes the side's balance, entitlements,
/// records, renewal state and sweep-index entries, keeps its event sequence, and writes its `sandbox.cleared` event
/// (docs/EVENTS.md). The primary side is never touched.
package enum SandboxSide {
    package enum Outcome: Sendable, Equatable {
        /// Cleared: the coins and the records the side held, and the `sandbox.cleared` event.
        case cleared(coins: Int64, transactions: Int, seq: Int64, eventId: String)
        /// The side held nothing; nothing written.
        case empty
    }

    /// Clears `user`'s sandbox side; `by` names who did (recorded on the event). Reads what the side holds, then
    /// clears exactly that, reading again when the fulfiller added to it meanwhile.
    package static func clear(
        user: String, by: String, keys unsided: Keys, now: Int64, userEventLog: UserEventLog = UserEventLog(),
        on redis: any RedisCommandExecutor
    ) async throws -> Outcome {
        guard UserID.isValid(user) else { throw LedgerError.unexpectedReply("the user id is not valid") }
        let keys = unsided.on(.sandbox)
        let partition = keys.partition(ofUser: user)
        for _ in 0..<5 {
            let tids = (try await redis.send(RedisCommand("ZRANGE", key: keys.transactions(user: user), 0, -1)).array ?? [])
                .compactMap(\.string)
            let account = try await redis.send(RedisCommand("HGETALL", key: keys.account(user: user))).fieldValues
            let entitlements = account.keys.compactMap { field -> String? in
                guard field.hasPrefix("ent:"), field.hasSuffix(":state") else { return nil }
                return String(field.dropFirst(4).dropLast(6))
            }.sorted()
            let callKeys =
                [
                    keys.account(user: user), keys.ledgerMeta(user: user), keys.transactions(user: user),
                    keys.notifications(user: user), keys.events(partition: partition).stream, keys.userEvents(user: user),
                    keys.subscriptionsDue(partition: partition), keys.subscriptionsDueReference(partition: partition),
                ] + tids.map { keys.transaction(user: user, transactionId: $0) }
                + entitlements.map { keys.entitlement(user: user, name: $0) }
                + tids.map { keys.transactionOwner(partition: partition, transactionId: $0) }
            let arguments =
                [user, by, String(now), String(tids.count)] + tids + [String(entitlements.count)] + entitlements
                + [String(userEventLog.cap), String(userEventLog.retentionSeconds)]
            let reply = try await LedgerFunctions.library.call(
                "clear_sandbox", on: redis, keys: callKeys, arguments: arguments.map { Array($0.utf8) })
            guard let bytes = reply.bytes, let fields = try? JSONFields(JSONReader.parse(bytes)),
                let outcome = try? fields.string("outcome")
            else {
                throw LedgerError.unexpectedReply("clear_sandbox returned \(reply)")
            }
            switch outcome {
            case "changed":
                continue
            case "empty":
                return .empty
            case "cleared":
                guard let coins = (try? fields.string("coins")).flatMap({ Int64($0) }),
                    let count = (try? fields.string("transactions")).flatMap({ Int($0) }),
                    let seq = (try? fields.string("seq")).flatMap({ Int64($0) }), let id = try? fields.string("id")
                else { throw LedgerError.unexpectedReply("clear_sandbox returned \(String(decoding: bytes, as: UTF8.self))") }
                return .cleared(coins: coins, transactions: count, seq: seq, eventId: id)
            default:
                throw LedgerError.unexpectedReply("clear_sandbox returned \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        throw LedgerError.unexpectedReply("user \(user)'s sandbox side kept changing while it was cleared")
    }
}
