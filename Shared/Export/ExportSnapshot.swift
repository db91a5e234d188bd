package import Ledger
package import Pipeline
package import Redis

/// What the export writes of one user, read from the ledger in one call of the `tollgate_export_v2` library
/// (`Lua/export.lua`): the account (its `events.seq` is the user's last event, so it names the state exactly), the
/// grants, and one transaction record or a page of them. A snapshot is never older than the event that asked for
/// it; rows written from it carry its `seq` (``seq``), and a row is only ever replaced by a newer one.
package struct ExportSnapshot: Sendable {
    /// The Redis Function library of the reads.
    package static let library = RedisFunctionLibrary(
        "export", version: 2, functions: ["snapshot", "user"], parts: [SharedLua.common, PackageResources.export_lua])
    /// The most transaction records one ``user(_:keys:first:on:)`` page reads.
    package static let page = 200

    package var userId: String
    /// The ledger side read (``Pipeline/LedgerSide``): the sandbox side's row is in `sandbox_users`.
    package var side = LedgerSide.primary
    package var account: [String: String]
    package var grants: [String: String]
    package var transactions: [TransactionRecord]
    /// The user's records in all (``user(_:keys:first:on:)``; the records read otherwise).
    package var transactionsTotal: Int

    /// The user's event sequence the snapshot shows (`events.seq` of the account; 0 before any event).
    package var seq: Int64 { account["events.seq"].flatMap { Int64($0) } ?? 0 }

    /// The table of the user's row: `users`, or `sandbox_users` for the sandbox side.
    package var usersTable: String { Self.usersTable(side) }

    /// The table of a side's user rows.
    package static func usersTable(_ side: LedgerSide) -> String { side == .sandbox ? "sandbox_users" : "users" }

    /// The user's coins and entitlements as the `users` row holds them.
    package var user: UserRow { UserRow(userId: userId, account: account, grants: grants, seq: seq) }

    /// Reads `user`'s account, grants and the records of `transactionIds` (those that exist), on `side`.
    package static func read(
        user: String, side: LedgerSide, transactionIds: [String], keys unsided: Keys, on redis: any RedisCommandExecutor
    ) async throws -> ExportSnapshot {
        let keys = unsided.on(side)
        let records = transactionIds.map { keys.transaction(user: user, transactionId: $0) }
        let reply = try await library.call(
            "snapshot", on: redis, keys: [keys.account(user: user), keys.grants(user: user)] + records, arguments: [])
        guard let parts = reply.array, parts.count == 3, let list = parts[2].array else {
            throw PipelineError.unexpectedReply("\(library.function("snapshot")) returned \(reply)")
        }
        let transactions = list.compactMap { TransactionRecord(hash: $0.fieldValues) }
        return ExportSnapshot(
            userId: user, side: side, account: parts[0].fieldValues, grants: parts[1].fieldValues, transactions: transactions,
            transactionsTotal: transactions.count)
    }

    /// The records an events stream entry's event changed: the one its event names, and every transaction of the
    /// ledger call that wrote it (`event.txs`, when it applied several, or on a `record` entry), each once.
    package static func transactionIds(of event: ExportEvent?, entry: StreamEntry) -> [String] {
        var ids: [String] = event?.transactionId.map { [$0] } ?? []
        for id in (entry.string("event.txs") ?? "").split(separator: ",") where !ids.contains(String(id)) {
            ids.append(String(id))
        }
        return ids
    }

    /// Reads `user`'s account, grants and the page of records from index `first` (oldest first), on `side`.
    package static func user(
        _ user: String, side: LedgerSide, keys unsided: Keys, first: Int, on redis: any RedisCommandExecutor
    ) async throws -> ExportSnapshot {
        let keys = unsided.on(side)
        let reply = try await library.call(
            "user", on: redis,
            keys: [keys.account(user: user), keys.grants(user: user), keys.transactions(user: user)],
            arguments: [keys.transaction(user: user, transactionId: ""), String(first), String(page)])
        guard let parts = reply.array, parts.count == 4, let list = parts[3].array else {
            throw PipelineError.unexpectedReply("\(library.function("user")) returned \(reply)")
        }
        return ExportSnapshot(
            userId: user, side: side, account: parts[0].fieldValues, grants: parts[1].fieldValues,
            transactions: list.compactMap { TransactionRecord(hash: $0.fieldValues) }, transactionsTotal: Int(parts[2].int ?? 0))
    }
}
