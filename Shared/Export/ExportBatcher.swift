import Ledger
import Logging
import PostgresNIO

/// Group commit for the exporter's writes (docs/EXPORT.md): while one statement is in flight, the writes that arrive
/// queue, and the next statement carries them all (up to ``maximumBatch``). Alone, a write goes at once, so a quiet
/// exporter adds no latency; under load, PostgreSQL commits (a WAL flush each) and round trips are divided by the
/// batch. One statement cannot write a row twice, so a batch takes only items whose rows (``Item/rows``: the event,
/// the user, the transactions, the grant) are distinct; the others wait for the next. When PostgreSQL refuses a batch
/// for what is in it, each of its items is written alone, so one bad item fails only itself.
package actor ExportBatcher {
    struct Item {
        let event: ExportEvent?
        let snapshot: ExportSnapshot?
        let done: CheckedContinuation<Void, any Error>

        /// The rows it writes, by table: two items sharing one cannot be in one statement.
        var rows: [String] {
            var rows: [String] = []
            if let event {
                rows.append("e:" + event.id)
                if let user = event.userId { rows.append("u:" + user) }
                if let grant = event.grantId { rows.append("g:" + grant) }
            }
            if let snapshot {
                rows.append("u:" + snapshot.userId)
                rows += snapshot.transactions.map { "t:" + $0.transactionId }
            }
            return rows
        }
    }

    let writer: ExportWriter
    /// The most items one statement carries.
    package let maximumBatch: Int
    private var queue: [Item] = []
    private var flushing = false

    package init(writer: ExportWriter, maximumBatch: Int = 64) {
        self.writer = writer
        self.maximumBatch = max(1, maximumBatch)
    }

    /// Writes `event` with `snapshot` (or `snapshot` alone), in whichever statement takes it; throws what that
    /// statement threw.
    package func write(_ event: ExportEvent?, snapshot: ExportSnapshot?) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            queue.append(Item(event: event, snapshot: snapshot, done: done))
            if !flushing {
                flushing = true
                Task { await self.flush() }
            }
        }
    }

    private func flush() async {
        while !queue.isEmpty {
            let batch = takeBatch()
            do {
                try await writer.write(batch: batch.map { ($0.event, $0.snapshot) })
                for item in batch { item.done.resume() }
            } catch let error as PSQLError where batch.count > 1 && error.serverInfo != nil {
                // Refused for what is in it: each alone, so that only the bad one fails.
                for item in batch {
                    do {
                        try await writer.write(batch: [(item.event, item.snapshot)])
                        item.done.resume()
                    } catch {
                        item.done.resume(throwing: error)
                    }
                }
            } catch {
                for item in batch { item.done.resume(throwing: error) }
            }
        }
        flushing = false
    }

    /// The oldest items whose rows are distinct, up to ``maximumBatch``; the rest stay queued in order.
    private func takeBatch() -> [Item] {
        var taken: [Item] = []
        var kept: [Item] = []
        var rows = Set<String>()
        for item in queue {
            let itemRows = item.rows
            if taken.count < maximumBatch && rows.isDisjoint(with: itemRows) {
                taken.append(item)
                rows.formUnion(itemRows)
            } else {
                kept.append(item)
            }
        }
        queue = kept
        return taken
    }
}
