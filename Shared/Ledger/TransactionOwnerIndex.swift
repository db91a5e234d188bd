package import Pipeline
package import Redis

/// The owner index `GET /v1/transactions/{id}` reads (``Keys/transactionOwner(partition:transactionId:)``), written
/// for the records of users whose records predate it (ledger v7 writes it with each record): `tollctl
/// index-transactions`. Every account's transactions get `SET … NX`, so an index the ledger wrote is never replaced,
/// and running it twice writes nothing the second time.
package enum TransactionOwnerIndex {
    package struct Report: Sendable, Equatable {
        package var users = 0
        package var transactions = 0
        /// Index entries written (or, in a dry run, missing).
        package var written = 0
    }

    /// Scans every account (on every primary of a cluster); a dry run only counts what is missing.
    package static func backfill(on redis: any RedisCommandExecutor, keys: Keys, dryRun: Bool) async throws -> Report {
        var report = Report()
        try await redis.scanKeys(match: keys.accountPattern) { found in
            for key in found {
                guard let user = keys.user(ofAccountKey: key) else { continue }
                let ids = try await redis.send(RedisCommand("ZRANGE", key: keys.transactions(user: user), 0, -1)).array ?? []
                let partition = keys.partition(ofUser: user)
                let indexKeys = ids.compactMap(\.string).map { keys.transactionOwner(partition: partition, transactionId: $0) }
                report.users += 1
                report.transactions += indexKeys.count
                guard !indexKeys.isEmpty else { continue }
                let replies = try await redis.pipeline(
                    indexKeys.map { dryRun ? RedisCommand("EXISTS", key: $0) : RedisCommand("SET", key: $0, user, "NX") })
                report.written += replies.filter { dryRun ? $0.int == 0 : !$0.isNull }.count
            }
        }
        return report
    }
}
