import Foundation
import Pipeline
import Redis
import ServiceLifecycle
import TestSupport

@testable import Verification
@testable import verifier

/// The verifier's tests run against ``StoreHarness`` (a real redis-server and the real `appstore-sim`), with
/// verifiers built in-process by `App.build`.
typealias VerifierHarness = StoreHarness

extension StoreHarness {
    /// Runs an in-process verifier built by `App.build` while `body` runs; returns its metrics port too.
    func withVerifier(_ extra: [String: String] = [:], _ body: (Int) async throws -> Void) async throws {
        let configuration = try VerifierConfiguration(environment: environment(extra))
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = try await App.build(
            configuration: configuration, logger: logger, handlesSignals: false,
            onMetricsServerRunning: { port in
                continuation.yield(port)
                continuation.finish()
            })
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        do {
            try await body(port)
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw error
        }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// Pending entries of the verifiers' group.
    func pendingCount() async throws -> Int {
        try await redis.xpendingSummary(keys.jobs().stream, group: App.consumerGroup).count
    }
}
