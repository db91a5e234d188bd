import Export
import Foundation
import Ledger
import PostgresNIO
import TestSupport
import Testing

/// Group commit: concurrent writes share statements, never write a row twice in one, and a refused item fails alone.
@Suite(.serialized) struct ExportBatcherTests {
    /// An event of `user` with sequence `seq`, as the ledger writes it (only what the writer reads).
    static func event(_ id: String, user: String, seq: Int64, at: String = "2026-01-01T00:00:00.000Z") throws -> ExportEvent {
        let json =
            #"{"id":"\#(id)","type":"coins.spent","userId":"\#(user)","seq":\#(seq),"at":"\#(at)","#
            + #""delta":-1,"balance":0,"amount":1,"idempotencyKey":"k-\#(id)","by":"shop","reason":"r"}"#
        return try ExportEvent(json: Array(json.utf8))
    }

    @Test func concurrentWritesAllLandOnceAndARefusedOneFailsAlone() async throws {
        try await withPostgresServer { postgres in
            let settings = try PostgresSettings(url: postgres.url)
            let client = PostgresClient(configuration: settings.clientConfiguration, backgroundLogger: testLogger)
            let running = Task { await client.run() }
            defer { running.cancel() }
            try await ExportSchema.migrate(client, logger: testLogger)
            let batcher = ExportBatcher(writer: ExportWriter(client: client, logger: testLogger), maximumBatch: 8)
            // 40 events of 10 users (4 each: rows of one user never share a statement), one with a time PostgreSQL
            // refuses, each written by its own task at once, some twice.
            let events = try (0..<40).map { try Self.event("evt_\($0)", user: "u\($0 % 10)", seq: Int64($0 / 10 + 1)) }
            let bad = try Self.event("evt_bad", user: "u99", seq: 1, at: "not a time")
            await #expect(throws: (any Error).self) {
                try await ExportWriter(client: client, logger: testLogger).write(bad, snapshot: nil)
            }
            let failures = await withTaskGroup(of: Bool.self) { group in
                for event in events + events.prefix(5) + [bad] {
                    group.addTask {
                        do {
                            try await batcher.write(event, snapshot: nil)
                            return false
                        } catch {
                            return true
                        }
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(failures == 1)
            var counts: [Int64] = []
            for table in ["events", "spends"] {
                for try await count in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"))
                    .decode(Int64.self)
                {
                    counts.append(count)
                }
            }
            #expect(counts == [40, 40])
        }
    }
}
