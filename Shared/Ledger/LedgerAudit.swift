package import Pipeline
package import Redis

/// Recomputes every user's coin balance from their transaction records and compares it with the account
/// hash: balance = Σ over records (`coins` credited − `debited` by a standing refund) + what labelled grants added
/// (the ledger meta's `grants.coins`, net of revocations: ``LedgerGrants``) − what services spent (the account's
/// `coins.spent`: ``CoinSpend``). The ledger functions write each change and its counts in one atomic call, so any
/// difference means a hand edit, a bug or data loss. Grants are never counted as differences against Apple's
/// records: they are reported apart (``Report/granted``). Each side of a user's ledger (``LedgerSide``) is audited
/// apart: a sandbox side's balance is its own records' and spends'.
package struct LedgerAudit: Sendable {
    /// One user whose stored balance differs from the recomputed one.
    package struct Difference: Sendable, Hashable {
        package var user: String
        package var stored: Int64
        package var recomputed: Int64
        /// The side of the user's ledger that differs.
        package var side: LedgerSide

        package init(user: String, stored: Int64, recomputed: Int64, side: LedgerSide = .primary) {
            self.user = user
            self.stored = stored
            self.recomputed = recomputed
            self.side = side
        }
    }

    /// A user with labelled grants: how many the grants hash holds and the coins grants added (net of revocations).
    package struct Granted: Sendable, Hashable {
        package var user: String
        package var grants: Int
        package var coins: Int64

        package init(user: String, grants: Int, coins: Int64) {
            (self.user, self.grants, self.coins) = (user, grants, coins)
        }
    }

    /// What an audit found.
    package struct Report: Sendable, Hashable {
        package var users = 0
        package var transactions = 0
        package var differences: [Difference] = []
        /// Users with grants, apart from Apple's records.
        package var granted: [Granted] = []
    }

    package let redis: any RedisCommandExecutor
    package let keys: Keys

    package init(redis: any RedisCommandExecutor, keys: Keys) {
        self.redis = redis
        self.keys = keys
    }

    /// Audits every account of either side (found with `SCAN MATCH tg:{u:*}:account`, on every primary of a cluster).
    package func run() async throws -> Report {
        var report = Report()
        try await redis.scanKeys(match: keys.accountPattern) { found in
            for key in found {
                guard let (user, side) = keys.account(ofKey: key) else { continue }
                let result = try await audit(user: user, side: side)
                report.users += 1
                report.transactions += result.transactions
                if let difference = result.difference { report.differences.append(difference) }
                if let granted = result.granted { report.granted.append(granted) }
            }
        }
        report.differences.sort { ($0.user, $0.side.rawValue) < ($1.user, $1.side.rawValue) }
        report.granted.sort { $0.user < $1.user }
        return report
    }

    /// Audits one user: how many transaction records were read, the difference if any, and the user's grants if any.
    ///
    /// The balance and the records are read in one `MULTI`/`EXEC`, so a transaction the fulfiller applies
    /// meanwhile is either wholly in the snapshot or wholly out of it; when one was added between listing the
    /// records and reading them, the user is read again.
    package func audit(
        user: String, side: LedgerSide = .primary
    ) async throws -> (transactions: Int, difference: Difference?, granted: Granted?) {
        let keys = keys.on(side)
        for _ in 0..<5 {
            let ids = (try await redis.send(RedisCommand("ZRANGE", key: keys.transactions(user: user), 0, -1)).array ?? [])
                .compactMap(\.string)
            var commands = [
                RedisCommand(keyless: "MULTI"),
                RedisCommand("HMGET", key: keys.account(user: user), EntitlementsView.Field.coins, CoinSpend.Field.spent),
                RedisCommand("ZCARD", key: keys.transactions(user: user)),
                RedisCommand("HGET", key: keys.ledgerMeta(user: user), "grants.coins"),
                RedisCommand("HLEN", key: keys.grants(user: user)),
            ]
            commands += ids.map {
                RedisCommand("HMGET", key: keys.transaction(user: user, transactionId: $0), "coins", "debited")
            }
            commands.append(RedisCommand(keyless: "EXEC"))
            let replies = try await redis.pipeline(commands)
            guard let snapshot = replies.last?.array, snapshot.count == ids.count + 4 else {
                throw LedgerError.unexpectedReply("the audit transaction of user \(user) was refused")
            }
            guard snapshot[1].int == Int64(ids.count) else { continue }  // a record was added meanwhile
            let account = snapshot[0].array ?? []
            let stored = account.first?.int ?? 0
            let spent = account.count > 1 ? account[1].int ?? 0 : 0
            let grantedCoins = snapshot[2].int ?? 0
            let grants = Int(snapshot[3].int ?? 0)
            var recomputed: Int64 = grantedCoins - spent
            for record in snapshot.dropFirst(4) {
                let values = record.array ?? []
                recomputed += (values.first?.int ?? 0) - (values.count > 1 ? values[1].int ?? 0 : 0)
            }
            let difference =
                stored == recomputed ? nil : Difference(user: user, stored: stored, recomputed: recomputed, side: side)
            let granted = grants > 0 || grantedCoins != 0 ? Granted(user: user, grants: grants, coins: grantedCoins) : nil
            return (ids.count, difference, granted)
        }
        throw LedgerError.unexpectedReply("user \(user)'s transactions kept changing during the audit")
    }
}
