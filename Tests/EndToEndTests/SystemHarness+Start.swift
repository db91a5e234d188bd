import AppStore
import AppStoreTesting
import Foundation
import HTTPClient
import TestSupport

extension SystemHarness {
    /// The catalog every service of the test system reads (`TOLLGATE_CATALOG`).
    static let catalogJSON = """
        {"products": [
          {"productId": "com.example.coins100", "type": "consumable", "coins": 100},
          {"productId": "com.example.coins2000", "type": "consumable", "coins": 2000},
          {"productId": "com.example.vip.month", "type": "autoRenewable", "entitlement": "vip"},
          {"productId": "com.example.noads", "type": "nonConsumable", "entitlement": "no_ads"},
          {"productId": "com.example.pass90", "type": "nonRenewing", "entitlement": "pass", "durationDays": 90}
        ]}
        """

    /// Starts Redis (or takes `given`, already running: data an earlier build wrote, UpgradeTests; the system stops it
    /// with everything else), then ingest and the fulfillers, then the simulator (posting notifications to ingest),
    /// then the verifiers (trusting the simulator's root); each waits for its readiness endpoint. On any
    /// failure everything started so far is stopped.
    static func start(_ options: Options, redis given: SystemRedis? = nil) async throws -> SystemHarness {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let catalog = directory.appendingPathComponent("catalog.json")
        try Data(catalogJSON.utf8).write(to: catalog)
        let http = URLSessionTransport()
        // The simulator's CA exists before ingest starts: ingest trusts its root for the signature check at the
        // door, and the simulator (started after ingest, which it posts to) loads the same CA.
        _ = try TestCertificateAuthority.loadOrCreate(directory: directory.appendingPathComponent("sim-ca"))
        let redis: SystemRedis
        if let given { redis = given } else { redis = try await SystemRedis.start() }
        let started = StartedServices()
        do {
            // The app's identity is shared by every service, as compose's tollgate.env shares it: ingest checks it at
            // the door, the verifier on everything it verifies.
            var common = redis.environment.merging([
                "TOLLGATE_KEY_PREFIX": "tg", "LOG_LEVEL": "info", "TOLLGATE_BUNDLE_ID": bundleId, "TOLLGATE_APP_APPLE_ID": "1234567890",
                "TOLLGATE_ENVIRONMENT": "production", "TOLLGATE_ACCEPT_SANDBOX": options.acceptSandbox ? "true" : "false",
            ]) { $1 }
            // Two apps: the apps file replaces the one-app variables (TOLLGATE_SHARED_SECRET included) everywhere.
            var simExtra: [String: String] = [:]
            if options.twoApps || options.twoProjects {
                let apps =
                    options.twoProjects
                    ? try twoProjectSettings(directory: directory, catalog: catalog) : try twoAppSettings(directory: directory)
                common["TOLLGATE_BUNDLE_ID"] = nil
                common["TOLLGATE_APP_APPLE_ID"] = nil
                common.merge(apps.tollgate) { _, new in new }
                simExtra = apps.sim
            }
            let first = try await launchAll(
                [ingestSpec(common, catalog: catalog, directory: directory)]
                    + fulfillerSpecs(common, catalog: catalog, count: options.replicas),
                in: directory, http: http, into: started)
            let ingest = first[0]
            let sim = try await launchAll(
                [simSpec(directory: directory, ingest: ingest, extra: simExtra)], in: directory, http: http,
                into: started)[0]
            let verifiers = try await launchAll(
                verifierSpecs(common, sim: sim, directory: directory, options: options),
                in: directory, http: http, into: started)
            return SystemHarness(
                options: options, directory: directory, redis: redis, ingest: ingest, sim: sim,
                verifiers: verifiers, fulfillers: Array(first.dropFirst()), http: http)
        } catch {
            await stop(await started.all)
            await redis.shutdown()
            throw error
        }
    }

    /// Launches `specs` concurrently; returns them in order.
    private static func launchAll(
        _ specs: [ServiceProcess.Spec], in directory: URL, http: URLSessionTransport,
        into started: StartedServices
    ) async throws -> [ServiceProcess] {
        try await withThrowingTaskGroup(of: (Int, ServiceProcess).self) { group in
            for (index, spec) in specs.enumerated() {
                group.addTask {
                    let service = try await ServiceProcess.launch(spec, in: directory, http: http)
                    await started.add(service)
                    return (index, service)
                }
            }
            var result: [Int: ServiceProcess] = [:]
            for try await (index, service) in group { result[index] = service }
            return specs.indices.compactMap { result[$0] }
        }
    }

    private static func ingestSpec(_ common: [String: String], catalog: URL, directory: URL) -> ServiceProcess.Spec {
        ServiceProcess.Spec(
            name: "ingest", executable: "ingest",
            environment: { port in
                common.merging([
                    "TOLLGATE_HTTP_HOST": "127.0.0.1", "TOLLGATE_HTTP_PORT": String(port),
                    "TOLLGATE_CATALOG": catalog.path,
                    "TOLLGATE_CLIENT_JWT_SECRET": clientJWTSecret,
                    // With projects, the `games` project's operators have a key of their own (docs/PROJECTS.md).
                    "TOLLGATE_SERVICE_KEYS": common[SystemHarness.projectsMarker] == nil
                        ? serviceKey : "\(serviceKey),ops-games@games:read+admin:\(gamesServiceKey)",
                    "TOLLGATE_V1_NOTIFICATIONS": "true", "TOLLGATE_SHARED_SECRET": sharedSecret,
                    "TOLLGATE_ROOT_CERTS": directory.appendingPathComponent("sim-ca/root.der").path,
                    "TOLLGATE_REDIS_COMMAND_TIMEOUT_MS": "10000",  // AOF fsyncs stall on a loaded CI disk
                    "TOLLGATE_OPS_ON_PUBLIC_LISTENER": "true",  // loopback only: the harness asks /readyz there
                ]) { _, new in new }.filter { $0.key != "TOLLGATE_SHARED_SECRET" || common["TOLLGATE_APPS"] == nil }
                    // A projects file names each project's catalog and user-token secret.
                    .filter {
                        !["TOLLGATE_CATALOG", "TOLLGATE_CLIENT_JWT_SECRET"].contains($0.key) || common[SystemHarness.projectsMarker] == nil
                    }
            }, readinessPath: "/readyz")
    }

    private static func fulfillerSpecs(_ common: [String: String], catalog: URL, count: Int) -> [ServiceProcess.Spec] {
        (1...count).map { replica in
            ServiceProcess.Spec(
                name: "fulfiller-\(replica)", executable: "fulfiller",
                environment: { port in
                    common.merging([
                        "TOLLGATE_CATALOG": catalog.path, "TOLLGATE_METRICS_HOST": "127.0.0.1",
                        "TOLLGATE_METRICS_PORT": String(port), "TOLLGATE_CLAIM_INTERVAL_MS": "1000",
                    ]) { _, new in new }.filter { $0.key != "TOLLGATE_CATALOG" || common[SystemHarness.projectsMarker] == nil }
                }, readinessPath: "/healthz")
        }
    }

    private static func simSpec(directory: URL, ingest: ServiceProcess, extra: [String: String]) -> ServiceProcess.Spec {
        ServiceProcess.Spec(
            name: "appstore-sim", executable: "appstore-sim",
            arguments: { _ in ["--ca-dir", directory.appendingPathComponent("sim-ca").path] },
            environment: { port in
                [
                    "SIM_HOST": "127.0.0.1", "SIM_PORT": String(port),
                    "SIM_NOTIFY_URL": ingest.baseURL + "/v1/apple/notifications",
                    "SIM_RETRY_SCALE": "3600", "SIM_BUNDLE_ID": bundleId, "SIM_APP_APPLE_ID": "1234567890",
                    "SIM_SHARED_SECRET": sharedSecret,
                    "LOG_LEVEL": "info",
                ].merging(extra) { _, new in new }
            }, readinessPath: "/sim/health")
    }

    private static func verifierSpecs(
        _ common: [String: String], sim: ServiceProcess, directory: URL,
        options: Options
    ) -> [ServiceProcess.Spec] {
        var apple = [
            "TOLLGATE_ROOT_CERTS": directory.appendingPathComponent("sim-ca/root.der").path,
            "TOLLGATE_RECEIPT_INTERMEDIATE_CERTS": directory.appendingPathComponent("sim-ca/intermediate.der").path,
            "TOLLGATE_VERIFY_RECEIPT_URL": sim.baseURL + "/verifyReceipt",
            "TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL": sim.baseURL + "/sandbox/verifyReceipt",
            "TOLLGATE_APPSTORE_API_URL": sim.baseURL,
            "TOLLGATE_APPSTORE_API_SANDBOX_URL": sim.baseURL + "/sandbox",
            "TOLLGATE_SHARED_SECRET": sharedSecret, "TOLLGATE_RETRY_BASE_MS": "100", "TOLLGATE_RETRY_CAP_MS": "1000",
            "TOLLGATE_APPLE_TIMEOUT_MS": "5000",
            "TOLLGATE_VERIFIER_CONCURRENCY": "16", "TOLLGATE_METRICS_HOST": "127.0.0.1",
        ]
        if options.serverAPI, let key = try? testAPIKeySettings(directory: directory) {
            apple.merge(key) { _, new in new }
        }
        if options.withoutVerifyReceipt {
            apple["TOLLGATE_RECEIPT_VALIDATION"] = "server-api"
            apple["TOLLGATE_VERIFY_RECEIPT_URL"] = "http://127.0.0.1:1/verifyReceipt"
            apple["TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL"] = "http://127.0.0.1:1/sandbox/verifyReceipt"
        }
        if options.twoApps || options.twoProjects { apple["TOLLGATE_SHARED_SECRET"] = nil }
        let settings = apple
        return (1...options.replicas).map { replica in
            ServiceProcess.Spec(
                name: "verifier-\(replica)", executable: "verifier",
                environment: { port in
                    common.merging(settings) { _, new in new }.merging(["TOLLGATE_METRICS_PORT": String(port)]) { _, new in new }
                }, readinessPath: "/healthz")
        }
    }
}
