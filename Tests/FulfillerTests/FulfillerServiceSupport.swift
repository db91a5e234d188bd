import Foundation
import Ledger
import Logging
import Pipeline
import Redis
import ServiceLifecycle
import TestSupport
@testable import fulfiller

/// A fulfiller replica built with ``App/build`` and run on a background task.
struct RunningFulfiller {
    let group: ServiceGroup
    let task: Task<Void, any Error>

    static func start(_ server: RedisServer, consumer: String, claimMinIdle: Duration = .seconds(30),
                      concurrency: Int = 16) async throws -> RunningFulfiller {
        var configuration = FulfillerConfiguration(
            shared: SharedConfiguration(redis: server.configuration(), keys: Keys(prefix: "tg")), catalog: testCatalog)
        configuration.metricsHost = "127.0.0.1"
        configuration.metricsPort = 0
        configuration.claimMinIdle = claimMinIdle
        configuration.claimInterval = .milliseconds(50)
        configuration.concurrency = concurrency
        let clock = PipelineClock(nowMilliseconds: { testNow }, unitRandom: { 0 })
        let group = try await App.build(configuration: configuration, logger: testLogger, consumer: consumer,
                                        handlesSignals: false, clock: clock)
        return RunningFulfiller(group: group, task: Task { try await group.run() })
    }

    func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// The sum of every user's coin balance.
func totalCoins(_ h: LedgerHarness, users: [String]) async throws -> Int64 {
    var total: Int64 = 0
    for user in users { total += try await h.coins(user) }
    return total
}

/// The `fulfiller` executable built next to the test bundle (`swift build` puts both in `.build/<config>`).
let fulfillerBinary: URL? = {
    var folders: [URL] = []
    if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
    folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    folders.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug"))
    for folder in folders {
        for candidate in [folder, folder.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("fulfiller")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
    }
    return nil
}()
