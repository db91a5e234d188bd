import AppStore
import Core
import Foundation
import Hummingbird
import Logging
import Pipeline
import Prometheus
import Redis
import ServiceKit
import ServiceLifecycle

/// Builds the verifier as a `ServiceGroup` from this module's parts; the `verifier` executable runs it, tests
/// build it in-process.
package enum VerifierServices {
    /// The consumer group every verifier replica joins.
    package static let consumerGroup = "verifiers"

    /// Builds the verifier: the Redis client (a pool, or a cluster client; with the pipeline, verifier, rate-limit and reconcile functions
    /// loaded), the Apple clients, the consumer of every partition's jobs stream, their retry promoter and janitor, the ``Reconciler`` (when
    /// enabled and an API key is configured) and the operators' listener (`/healthz`, `/readyz`, `/metrics`:
    /// `OperatorEndpoints`), as one `ServiceGroup` shut down gracefully on SIGTERM and SIGINT (`handlesSignals`).
    /// Tests call this directly (metrics port 0, their own consumer name, no signal handling).
    package static func build(
        configuration: VerifierConfiguration,
        logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        consumer: String = ConsumerName.unique(),
        handlesSignals: Bool = true,
        onMetricsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> ServiceGroup {
        let keys = configuration.shared.keys
        let handles = MetricHandles(factory: PrometheusMetricsFactory(registry: registry))
        let metrics = VerifierMetrics(handles: handles)
        let (signedData, receipts, apiClients) = try appleClients(configuration, metrics: metrics)

        let (redis, operatorsRedis) = try await configuration.shared.connectWorker(
            clientName: "verifier",
            libraries: [VerifierFunctions.library, RateLimitFunctions.library, ReconcileFunctions.library], logger: logger)
        let clock = PipelineClock.system
        let verifier = JobVerifier(
            configuration: configuration, signedData: signedData, receipts: receipts, apiClients: apiClients,
            limiter: FleetRateLimiter(redis: redis), redis: redis, clock: clock, logger: logger)
        let handler = JobHandler(
            verifier: verifier, redis: redis, keys: keys, group: consumerGroup, consumer: consumer,
            heartbeatInterval: configuration.heartbeatInterval, clock: clock,
            metrics: metrics, logger: logger)
        // Every partition's jobs stream; each job's outcome is written in its own partition (JobHandler).
        let jobStreams = keys.partitionStreams("jobs")
        let consumerService = StreamConsumer(
            configuration: StreamConsumerConfiguration(
                streams: jobStreams, group: consumerGroup, consumer: consumer, concurrency: configuration.concurrency,
                readCount: min(configuration.concurrency, 64), claimMinIdle: configuration.claimMinIdle,
                claimInterval: configuration.claimInterval, retry: configuration.retry),
            redis: redis, clock: clock, metrics: handles, logger: logger,
            deadLetterWrites: { handler.deadLetterWrites($0, $1) },
            handler: { try await handler.handle($0) })
        let promoter = RetryPromoter(
            streams: jobStreams.map(\.keys), redis: redis, interval: .milliseconds(200), metrics: handles, logger: logger)
        let janitor = StreamJanitor(streams: jobStreams.map(\.keys), redis: redis, metrics: handles, logger: logger)
        let endpoints = OperatorEndpoints(
            redis: operatorsRedis,
            libraries: [PipelineFunctions.library, VerifierFunctions.library, RateLimitFunctions.library, ReconcileFunctions.library],
            metrics: {
                metrics.chainCache(signedData.chainCache.statistics)
                return registry.emitToBuffer()
            })
        var services: [any Service] = [
            redis, operatorsRedis, consumerService, promoter, janitor,
            endpoints.application(
                host: configuration.metricsHost, port: configuration.metricsPort, serverName: "verifier",
                onServerRunning: onMetricsServerRunning, logger: logger),
        ]
        if configuration.reconcile.enabled, !apiClients.isEmpty || configuration.hasSharedSecret {
            services.append(
                Reconciler(
                    context: ReconcileContext(
                        configuration: configuration, signedData: signedData, receipts: receipts, apiClients: apiClients,
                        redis: redis, clock: .system, dryRun: false, metrics: metrics, logger: logger)))
        } else if configuration.reconcile.enabled {
            logger.notice(
                "Reconciler off: it needs an App Store Server API key (TOLLGATE_API_KEY_ID …) or, for receipts, TOLLGATE_SHARED_SECRET")
        }
        return configuration.shared.serviceGroup(
            services: services, handlesSignals: handlesSignals, metrics: handles.factory, logger: logger)
    }

    /// The JWS verifier, the receipt checkers (`verifyReceipt`'s client, the offline signature check) and the API clients, sharing one transport of the configured
    /// kind (instrumented for the calls to Apple; OCSP queries, should online checks be switched on, go through it
    /// uninstrumented).
    package static func appleClients(
        _ configuration: VerifierConfiguration, metrics: VerifierMetrics
    ) throws -> (SignedDataVerifier, ReceiptCheckers, AppleAPIClients) {
        let base = configuration.httpTransport.make(maximumConnectionsPerHost: max(4, configuration.concurrency))
        let transport = InstrumentedTransport(base: base, metrics: metrics)
        let signedData: SignedDataVerifier
        do {
            signedData = try SignedDataVerifier(
                configuration: SignedDataVerifierConfiguration(
                    rootCertificates: configuration.rootCertificates, bundleId: configuration.bundleId,
                    environment: configuration.environment, appAppleId: configuration.appAppleId,
                    acceptsSandbox: configuration.acceptSandbox, onlineChecks: configuration.onlineChecks,
                    checksRevocation: configuration.onlineChecks,
                    ocspRequester: TransportOCSPRequester(transport: base, timeout: configuration.appleTimeout),
                    onlineChainLifetime: Double(configuration.onlineChainLifetime.components.seconds),
                    additionalApps: configuration.additionalApps.map(\.identity)))
        } catch {
            throw ConfigurationError(variable: "TOLLGATE_ROOT_CERTS", problem: "is not usable: \(error.message)")
        }
        let receipts = ReceiptClient(
            configuration: ReceiptClientConfiguration(
                bundleId: configuration.bundleId, sharedSecret: configuration.sharedSecret,
                additionalApps: configuration.additionalApps.map { .init(bundleId: $0.bundleId, sharedSecret: $0.sharedSecret) },
                productionURL: configuration.verifyReceiptURL, sandboxURL: configuration.verifyReceiptSandboxURL,
                allowSandbox: configuration.allowsSandbox, startInSandbox: configuration.environment == .sandbox,
                timeout: configuration.appleTimeout), transport: transport)
        let signatures: ReceiptSignatureVerifier
        do {
            signatures = try ReceiptSignatureVerifier(
                rootCertificates: configuration.receiptRoots, intermediateCertificates: configuration.receiptIntermediates)
        } catch {
            throw ConfigurationError(
                variable: "TOLLGATE_RECEIPT_ROOT_CERTS, TOLLGATE_RECEIPT_INTERMEDIATE_CERTS", problem: "is not usable: \(error.message)")
        }
        return (
            signedData, ReceiptCheckers(legacy: receipts, signatures: signatures),
            try makeAPIClients(configuration, transport: transport)
        )
    }

    /// The App Store Server API clients of every app with a key, per environment the deployment accepts: each app's
    /// with its own key and its own bundle ID as `bid` (``AppleAPIClients``); none without a key.
    package static func makeAPIClients(
        _ configuration: VerifierConfiguration, transport: any HTTPTransport
    ) throws -> AppleAPIClients {
        var environments: [AppStoreEnvironment] = []
        if configuration.environment == .production { environments.append(.production) }
        if configuration.allowsSandbox { environments.append(.sandbox) }
        var entries: [AppleAPIClients.Entry] = []
        for app in configuration.apps {
            guard let key = app.apiKey else { continue }
            for environment in environments {
                do {
                    let client = try AppStoreServerAPIClient(
                        configuration: AppStoreServerAPIConfiguration(
                            issuerId: key.issuerId, keyId: key.keyId, privateKeyPEM: key.privateKeyPEM,
                            bundleId: app.bundleId, environment: environment, productionURL: configuration.apiURL,
                            sandboxURL: configuration.apiSandboxURL, timeout: configuration.appleTimeout), transport: transport)
                    entries.append(AppleAPIClients.Entry(bundleId: app.bundleId, environment: environment, client: client))
                } catch {
                    let variable = configuration.additionalApps.isEmpty ? "TOLLGATE_API_PRIVATE_KEY_PATH" : AppRegistry.variable
                    throw ConfigurationError(
                        variable: variable,
                        problem: configuration.additionalApps.isEmpty
                            ? "is not usable: \(error.message)" : "has an unusable apiKey for \(app.bundleId): \(error.message)")
                }
            }
        }
        return AppleAPIClients(entries)
    }
}
