import Pipeline
import Redis

/// Recomputes every user's coin balance from their transaction records and compares it with the account
/// hash: balance = Σ over records (`coins` credited − `debited` by a standing refund). The ledger function
/// writes both in one atomic call, so any difference means a hand edit, a bug or data loss.
public struct LedgerAudit: Sendable {
    /// One user whose stored balance differs from the recomputed one.
    public struct Difference: Sendable, Hashable {
        public var user: String
        public var stored: Int64
        public var recomputed: Int64

        public init(user: String, stored: Int64, recomputed: Int64) {
            self.user = user
            self.stored = stored
            self.recomputed = recomputed
        }
    }

    /// What an audit found.
    public struct Report: Sendable, Hashable {
        public var users = 0
        public var transactions = 0
        public var differences: [Difference] = []
    }

    public let redis: any RedisCommandExecutor
    public let keys: Keys

    public init(redis: any RedisCommandExecutor, keys: Keys) {
        self.redis = redis
        self.keys = keys
    }

    /// Audits every account (found with `SCAN MATCH tg:{u:*}:account`).
    public func run() async throws -> Report {
        var report = Report()
        var cursor = "0"
        repeat {
            let reply = try await redis.send(RedisCommand("SCAN", cursor, "MATCH", keys.accountPattern, "COUNT", 500))
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string, let found = parts[1].array else {
                throw LedgerError.unexpectedReply("SCAN returned \(reply)")
            }
            cursor = next
            for key in found.compactMap(\.string) {
                guard let user = keys.user(ofAccountKey: key) else { continue }
                let (count, difference) = try await audit(user: user)
                report.users += 1
                report.transactions += count
                if let difference { report.differences.append(difference) }
            }
        } while cursor != "0"
        report.differences.sort { $0.user < $1.user }
        return report
    }

    /// Audits one user: how many transaction records were read, and the difference if any.
    public func audit(user: String) async throws -> (Int, Difference?) {
        let stored = try await redis.send(RedisCommand("HGET", keys.account(user: user), "coins")).int ?? 0
        let ids = try await redis.send(RedisCommand("ZRANGE", keys.transactions(user: user), 0, -1)).array ?? []
        var recomputed: Int64 = 0
        for id in ids.compactMap(\.string) {
            let values = try await redis.send(RedisCommand(
                "HMGET", keys.transaction(user: user, transactionId: id), "coins", "debited")).array ?? []
            let coins = values.first?.int ?? 0
            let debited = values.count > 1 ? values[1].int ?? 0 : 0
            recomputed += coins - debited
        }
        let difference = stored == recomputed ? nil : Difference(user: user, stored: stored, recomputed: recomputed)
        return (ids.count, difference)
    }
}
