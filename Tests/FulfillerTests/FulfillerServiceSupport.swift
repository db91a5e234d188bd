import Core
import Foundation
import Ledger
import Logging
import Pipeline
import Redis
import ServiceKit
import ServiceLifecycle
import TestSupport

@testable import fulfiller

/// A fulfiller replica built with ``App/build`` and run on a background task.
struct RunningFulfiller {
    let group: ServiceGroup
    let task: Task<Void, any Error>

    static func start(
        _ server: RedisServer, keys: Keys = Keys(prefix: "tg"), consumer: String, claimMinIdle: Duration = .seconds(30),
        concurrency: Int = 16, projectCatalogs: [ProjectID: Catalog] = [:]
    ) async throws -> RunningFulfiller {
        var configuration = FulfillerConfiguration(
            shared: SharedConfiguration(redis: server.configuration(), keys: keys), catalog: testCatalog)
        configuration.metricsHost = "127.0.0.1"
        configuration.metricsPort = 0
        configuration.claimMinIdle = claimMinIdle
        configuration.claimInterval = .milliseconds(50)
        configuration.concurrency = concurrency
        configuration.projectCatalogs = projectCatalogs
        let clock = PipelineClock(nowMilliseconds: { testNow }, unitRandom: { 0 })
        let group = try await App.build(
            configuration: configuration, logger: testLogger, consumer: consumer,
            handlesSignals: false, clock: clock)
        return RunningFulfiller(group: group, task: Task { try await group.run() })
    }

    func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

/// The sum of every user's coin balance.
func totalCoins(_ h: LedgerHarness, users: [String]) async throws -> Int64 {
    var total: Int64 = 0
    for user in users { total += try await h.coins(user) }
    return total
}
