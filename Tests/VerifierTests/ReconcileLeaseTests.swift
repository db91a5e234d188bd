import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// The leader lease and its fencing, against a real redis-server.
@Suite
struct ReconcileLeaseTests {
    @Test func onlyTheHolderRenewsWritesAndReleases() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            try await ReconcileFunctions.library.load(on: redis)
            let keys = Keys()
            let lease = keys.reconcileLease
            let cursor = keys.reconcileCursor(environment: "Production")

            #expect(try await ReconcileFunctions.acquire(on: redis, lease: lease, token: "a", ttl: .seconds(30)))
            #expect(try await ReconcileFunctions.acquire(on: redis, lease: lease, token: "b", ttl: .seconds(30)) == false)
            #expect(try await ReconcileFunctions.acquire(on: redis, lease: lease, token: "a", ttl: .seconds(30)))
            #expect(
                try await ReconcileFunctions.write(on: redis, lease: lease, token: "b", hash: cursor, fields: [("checkpoint", "1")])
                    == false)
            #expect(try await redis.send("EXISTS", cursor).int == 0)
            #expect(
                try await ReconcileFunctions.write(
                    on: redis, lease: lease, token: "a", hash: cursor, fields: [("checkpoint", "2"), ("page.token", "t")]))
            #expect(
                try await ReconcileFunctions.write(on: redis, lease: lease, token: "a", hash: cursor, fields: [], removing: ["page.token"]))
            #expect(try await redis.send("HGET", cursor, "checkpoint").string == "2")
            #expect(try await redis.send("HEXISTS", cursor, "page.token").int == 0)
            #expect(try await ReconcileFunctions.release(on: redis, lease: lease, token: "b") == false)
            #expect(try await ReconcileFunctions.release(on: redis, lease: lease, token: "a"))
            #expect(try await ReconcileFunctions.acquire(on: redis, lease: lease, token: "b", ttl: .seconds(30)))
        }
    }

    @Test func aPassCancelledMidwayReleasesTheLease() async throws {
        try await withHolder(ttl: .seconds(60)) { redis, lease, holder async throws in
            // A verifier shutting down cancels its running pass: the lease must not outlive it (else every pass,
            // `tollctl reconcile` included, answers lease_held until it expires).
            #expect(try await redis.send("EXISTS", Keys().reconcileLease).int == 1)
            holder.cancel()
            _ = await holder.result
            #expect(try await redis.send("EXISTS", Keys().reconcileLease).int == 0)
            #expect(try await lease.withLease { _ in "next" } == "next")
        }
    }

    @Test func aSecondHolderIsRefusedAndALostLeaseCancelsTheWork() async throws {
        try await withHolder(ttl: .seconds(6)) { redis, lease, holder in
            await #expect(throws: VerificationError.self) {
                try await lease.withLease { _ in "second" }
            }
            // Someone else takes over the key (as after an expiry): the holder's next renewal cancels its work.
            _ = try await redis.send("SET", Keys().reconcileLease, "intruder")
            let result = await holder.result
            switch result {
            case .success(let value): Issue.record("the work finished (\(value)) although the lease was lost")
            case .failure(let error): #expect((error as? VerificationError)?.code == "lease_lost")
            }
            #expect(try await redis.send("GET", Keys().reconcileLease).string == "intruder")
        }
    }

    /// Runs `body` while a task holds the lease (a pass that would work for 30 s), against a real redis-server.
    private func withHolder(
        ttl: Duration,
        _ body: (RedisConnection, ReconcileLease, Task<String, any Error>) async throws -> Void
    ) async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            try await ReconcileFunctions.library.load(on: redis)
            let lease = ReconcileLease(redis: redis, key: Keys().reconcileLease, ttl: ttl)
            let (started, signal) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await lease.withLease { _ in
                    signal.yield()
                    try await Task.sleep(for: .seconds(30))
                    return "finished"
                }
            }
            defer { holder.cancel() }
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            try await body(redis, lease, holder)
        }
    }
}
