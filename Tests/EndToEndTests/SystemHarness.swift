import AppStore
import Foundation
import HTTPClient
import TestSupport

/// The whole Tollgate system as operators run it, for end-to-end tests: a real `redis-server`, the
/// `appstore-sim` (posting Apple's notifications to ingest), `ingest`, and `verifier` and `fulfiller`
/// replicas, each a real process on a free loopback port with its log in ``directory``.
///
/// Tests drive it only through public interfaces: ingest's HTTP API (``IngestClient``), the simulator's
/// control API (``SimClient``) and `tollctl` (``tollctl(_:)``). ``with(_:_:)`` always tears it down.
final class SystemHarness: Sendable {
    /// How the deployment is configured.
    struct Options: Sendable {
        /// `TOLLGATE_ACCEPT_SANDBOX` of the production verifiers.
        var acceptSandbox = false
        /// How many verifier and how many fulfiller replicas run.
        var replicas = 2
        /// The verifiers hold an App Store Server API key (Send Consumption Information, …).
        var serverAPI = false
        /// `verifyReceipt` is gone: receipts go through the Server API (`TOLLGATE_RECEIPT_VALIDATION=server-api`,
        /// which needs ``serverAPI``) and the `verifyReceipt` URLs lead nowhere.
        var withoutVerifyReceipt = false
        /// Two apps on the deployment (`TOLLGATE_APPS`: ``bundleId`` and ``macBundleId``, each with its own API key,
        /// the simulator taking each key for its own app only), StoreKit 2 transactions confirmed with the Server API.
        var twoApps = false
        /// Two projects (``twoProjectSettings(directory:catalog:)``): `default` with the two apps of ``twoApps`` and its
        /// user-token secret ``clientJWTSecret``, and `games` with ``gameBundleId`` and ``gamesJWTSecret``; each app
        /// its own API key, transactions confirmed with the Server API.
        var twoProjects = false
    }

    /// The HS256 secret of user tokens (`TOLLGATE_CLIENT_JWT_SECRET`).
    static let clientJWTSecret = "end-to-end-tests-client-jwt-secret-0123456789"
    /// The service API key (`TOLLGATE_SERVICE_KEYS`).
    static let serviceKey = "end-to-end-tests-service-key-0123"
    /// The app's shared secret: the `verifyReceipt` password, and the password V1 notifications must carry.
    static let sharedSecret = "end-to-end-tests-shared-secret"
    /// The app the simulator sells for and the verifiers accept.
    static let bundleId = "com.example.app"

    /// The system the current test runs against (set by ``SystemTrait``).
    @TaskLocal static var current: SystemHarness?

    let options: Options
    let directory: URL
    let redis: SystemRedis
    let ingest: ServiceProcess
    let sim: ServiceProcess
    let verifiers: [ServiceProcess]
    let fulfillers: [ServiceProcess]
    let http: URLSessionTransport

    init(
        options: Options, directory: URL, redis: SystemRedis, ingest: ServiceProcess, sim: ServiceProcess,
        verifiers: [ServiceProcess], fulfillers: [ServiceProcess], http: URLSessionTransport
    ) {
        self.options = options
        self.directory = directory
        self.redis = redis
        self.ingest = ingest
        self.sim = sim
        self.verifiers = verifiers
        self.fulfillers = fulfillers
        self.http = http
    }

    var services: [ServiceProcess] { [ingest, sim] + verifiers + fulfillers }

    /// The system under test for the current test; fails when the test does not run under ``SystemTrait``.
    static func require() throws -> SystemHarness {
        guard let current else {
            throw ChildProcess.Failure(description: "no system: the suite needs the .tollgateSystem trait")
        }
        return current
    }

    /// Starts a system (on `redis` when given, which it then stops too), runs `body`, and always stops every process and
    /// removes the directory.
    static func with<T>(
        _ options: Options = Options(), redis: SystemRedis? = nil, _ body: (SystemHarness) async throws -> T
    ) async throws -> T {
        let system = try await start(options, redis: redis)
        do {
            let result = try await body(system)
            await system.stop()
            return result
        } catch {
            print("end-to-end system failed: \(error)\n\(system.logTail())")
            await system.stop()
            throw error
        }
    }

    /// Stops the services (SIGTERM, then SIGKILL), Redis, and removes the directory unless
    /// `TOLLGATE_E2E_KEEP` is set.
    func stop() async {
        await Self.stop(services)
        await redis.shutdown()
        if ProcessInfo.processInfo.environment["TOLLGATE_E2E_KEEP"] == nil {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func stop(_ services: [ServiceProcess]) async {
        await withTaskGroup(of: Void.self) { group in
            for service in services { group.addTask { await service.stop() } }
        }
    }

    /// The last `lines` lines of every service's log, for failure reports.
    func logTail(lines: Int = 15) -> String {
        var parts: [String] = []
        for service in services {
            let state = service.isRunning ? "running" : "exited"
            parts.append("--- \(service.name) (\(state)) \(service.log.path)\n\(service.tail(lines: lines))")
        }
        return parts.joined(separator: "\n")
    }

    /// Runs `tollctl` against this system's Redis; returns its exit status and output.
    func tollctl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(
            "tollctl", arguments: arguments,
            environment: redis.environment.merging(["LOG_LEVEL": "warning"]) { $1 })
    }

    var ingestClient: IngestClient { IngestClient(baseURL: ingest.baseURL, http: http) }
    var simClient: SimClient { SimClient(baseURL: sim.baseURL, http: http) }
}
