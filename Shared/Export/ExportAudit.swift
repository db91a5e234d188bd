import Ledger
import Logging
package import Pipeline
package import PostgresNIO
package import Redis

/// `tollctl audit --export` (docs/EXPORT.md): compares the database with the ledger and names every difference —
/// a user's row (coins, granted and spent coins, entitlements, the last event's `seq`), every transaction record's
/// row column by column, the user's events (`seq` 1…n, none missing), and rows the ledger does not have. Run it
/// when the exporters have caught up (`tollctl streams` shows the `exporter` group's lag); before that, what they
/// have not written yet shows as differences.
package struct ExportAudit: Sendable {
    package struct Report: Sendable, Equatable {
        package var users = 0
        package var transactions = 0
        package var differences: [String] = []
    }

    let redis: any RedisCommandExecutor
    let keys: Keys
    let client: PostgresClient
    let logger: Logger

    package init(redis: any RedisCommandExecutor, keys: Keys, client: PostgresClient, logger: Logger) {
        self.redis = redis
        self.keys = keys
        self.client = client
        self.logger = logger
    }

    package func run() async throws -> Report {
        var report = Report()
        // Each side of each user apart (``Pipeline/LedgerSide``): its own row, records and event sequence.
        var users: [LedgerSide: Set<String>] = [:]
        var transactions = Set<String>()
        try await redis.scanKeys(match: keys.accountPattern) { found in
            for key in found {
                guard let (user, side) = keys.account(ofKey: key) else { continue }
                users[side, default: []].insert(user)
                report.users += 1
                var first = 0
                var snapshot = try await ExportSnapshot.user(user, side: side, keys: keys, first: first, on: redis)
                try await check(snapshot, into: &report)
                while true {
                    for record in snapshot.transactions {
                        transactions.insert(PostgresText.text(record.transactionId))  // as its row holds it
                        report.transactions += 1
                        var statement = SQLStatement()
                        let row = record.columns(user: user, seq: snapshot.seq, into: &statement)
                        statement.add(row.differences(in: "transactions", key: "transaction_id", ignoring: ["last_seq"]))
                        switch try await differing(statement.query) {
                        case .none: report.differences.append("transaction \(record.transactionId) (user \(user)): no row")
                        case .some(let columns) where !columns.isEmpty:
                            report.differences.append("transaction \(record.transactionId) (user \(user)): \(columns) differ")
                        default: break
                        }
                    }
                    first += ExportSnapshot.page
                    guard first < snapshot.transactionsTotal else { break }
                    snapshot = try await ExportSnapshot.user(user, side: side, keys: keys, first: first, on: redis)
                }
            }
        }
        for side in LedgerSide.allCases {
            let table = ExportSnapshot.usersTable(side)
            for try await user in try await client.query(
                PostgresQuery(unsafeSQL: "SELECT user_id FROM \(table) ORDER BY user_id"), logger: logger
            )
            .decode(String.self) where !(users[side]?.contains(user) ?? false) {
                report.differences.append("user \(user) (\(table)): a row, but no account in the ledger")
            }
        }
        for try await (tid, user) in try await client.query(
            "SELECT transaction_id, user_id FROM transactions ORDER BY transaction_id", logger: logger
        ).decode((String, String).self) where !transactions.contains(tid) {
            report.differences.append("transaction \(tid) (user \(user)): a row, but no record in the ledger")
        }
        report.differences.sort()
        return report
    }

    /// The user's row and events against the snapshot's account.
    private func check(_ snapshot: ExportSnapshot, into report: inout Report) async throws {
        let user = snapshot.userId
        let name = snapshot.side == .sandbox ? "user \(user) (sandbox side)" : "user \(user)"
        var statement = SQLStatement()
        let row = snapshot.user.columns(into: &statement)
        statement.add(row.differences(in: snapshot.usersTable, key: "user_id"))
        switch try await differing(statement.query) {
        case .none: report.differences.append("\(name): no row")
        case .some(let columns) where !columns.isEmpty: report.differences.append("\(name): \(columns) differ")
        default: break
        }
        let side = snapshot.side.rawValue
        let rows = try await client.query(
            "SELECT count(DISTINCT seq), coalesce(max(seq), 0) FROM events WHERE user_id = \(user) AND side = \(side)",
            logger: logger)
        for try await (count, last) in rows.decode((Int64, Int64).self) where count != snapshot.seq || last != snapshot.seq {
            report.differences.append(
                "\(name): events hold \(count) seqs up to \(last); the ledger has 1…\(snapshot.seq)")
        }
    }

    /// The comma-separated differing columns of the query's row; nil when there is no row.
    private func differing(_ query: PostgresQuery) async throws -> String? {
        for try await columns in try await client.query(query, logger: logger).decode(String.self) { return columns }
        return nil
    }
}
