import AppStore
package import Core
import Foundation
import Ledger
import Pipeline
import Redis
import ServiceKit

extension IngestConfiguration: ServiceConfiguration {
    /// Reads and validates every key (see ``IngestConfiguration``) by ``Core/EnvironmentReader``'s rules; throws
    /// a ``Core/ConfigurationError`` naming the variable.
    package init(environment: [String: String]) throws(ConfigurationError) {
        let reader = EnvironmentReader(environment)
        let shared = try SharedConfiguration(reader: reader, defaultShutdownGrace: Self.defaultShutdownGrace)
        let registry = try AppRegistry(reader: reader)
        let catalog = registry.hasProjects ? .empty : try Catalog.configuredIfAny(reader) ?? .empty
        self.init(shared: shared, app: registry.identity, catalog: catalog)
        doorChainChecksPerSecond = Double(
            try reader.int("TOLLGATE_DOOR_CHAIN_CHECKS_PER_SECOND", default: Int(doorChainChecksPerSecond), range: 1...10_000))
        doorChainCheckBurst = try reader.int("TOLLGATE_DOOR_CHAIN_CHECK_BURST", default: doorChainCheckBurst, range: 1...100_000)
        self.shared.redis.commandTimeout = try reader.milliseconds("TOLLGATE_REDIS_COMMAND_TIMEOUT_MS", default: 2000, range: 50...60_000)
        host = reader.string("TOLLGATE_HTTP_HOST", default: host)
        port = try reader.int("TOLLGATE_HTTP_PORT", default: port, range: 0...65535)
        if registry.hasProjects {
            try readProjects(registry, reader)
        } else if let secret = reader.optional("TOLLGATE_CLIENT_JWT_SECRET") {
            guard secret.utf8.count >= 32 else {
                throw ConfigurationError(variable: "TOLLGATE_CLIENT_JWT_SECRET", problem: "must be at least 32 bytes (HS256)")
            }
            clientJWTSecret = secret
        }
        do {
            // A key names a project of TOLLGATE_APPS (or `default`): one bound to no served project refuses to start.
            let served = Set([ProjectID.default] + registry.projects.map(\.id))
            serviceKeys = try ServiceKey.list(reader.list("TOLLGATE_SERVICE_KEYS"), projects: served)
        } catch {
            throw ConfigurationError(variable: "TOLLGATE_SERVICE_KEYS", problem: error.problem)
        }
        serviceKeyLimits.standard = ServiceKeyLimits.Limit(
            ratePerSecond: try reader.double(
                "TOLLGATE_SERVICE_KEY_RATE", default: serviceKeyLimits.standard.ratePerSecond, range: 0.001...100_000),
            burst: try reader.int("TOLLGATE_SERVICE_KEY_BURST", default: serviceKeyLimits.standard.burst, range: 1...100_000),
            maxInFlight: try reader.int(
                "TOLLGATE_SERVICE_KEY_MAX_IN_FLIGHT", default: serviceKeyLimits.standard.maxInFlight, range: 0...10_000))
        switch ServiceKeyLimits.entries(reader.list("TOLLGATE_SERVICE_KEY_LIMITS"), names: Set(serviceKeys.map(\.name))) {
        case .success(let limits): serviceKeyLimits.perKey = limits
        case .failure(let failure): throw ConfigurationError(variable: "TOLLGATE_SERVICE_KEY_LIMITS", problem: failure.problem)
        }
        maxBacklogService = try reader.int("TOLLGATE_MAX_BACKLOG_SERVICE", default: maxBacklogService, range: 0...Int(Int32.max))
        backlogBytesService = try reader.int(
            "TOLLGATE_BACKLOG_BYTES_SERVICE", default: backlogBytesService, range: 0...Int(Int64(1) << 40))
        clientJWTIssuer = reader.optional("TOLLGATE_CLIENT_JWT_ISSUER")
        clientJWTAudience = reader.optional("TOLLGATE_CLIENT_JWT_AUDIENCE")
        clientJWTMaxLifetime = try reader.duration("TOLLGATE_CLIENT_JWT_MAX_LIFETIME", default: clientJWTMaxLifetime, minimum: .seconds(60))
        if try reader.bool("TOLLGATE_V1_NOTIFICATIONS", default: false) {
            if registry.apps.count > 1 || reader.optional(AppRegistry.variable) != nil {
                for app in registry.apps { v1SharedSecrets[app.bundleId] = app.sharedSecret }
                guard !v1SharedSecrets.isEmpty else {
                    throw ConfigurationError(
                        variable: AppRegistry.variable, problem: "needs an app's sharedSecret when TOLLGATE_V1_NOTIFICATIONS is on")
                }
            } else {
                v1SharedSecret = try reader.required("TOLLGATE_SHARED_SECRET", "when TOLLGATE_V1_NOTIFICATIONS is on")
            }
        }
        maxBacklog = try reader.int("TOLLGATE_MAX_BACKLOG", default: maxBacklog, range: 0...Int(Int32.max))
        backlogBytesApple = try Self.budget(reader, "TOLLGATE_BACKLOG_BYTES_APPLE", default: backlogBytesApple)
        backlogBytesClient = try Self.budget(reader, "TOLLGATE_BACKLOG_BYTES_CLIENT", default: backlogBytesClient)
        userMaxInFlight = try reader.int("TOLLGATE_USER_MAX_IN_FLIGHT", default: userMaxInFlight, range: 0...10_000)
        userRatePerSecond = Double(try reader.int("TOLLGATE_USER_RATE", default: Int(userRatePerSecond), range: 1...100_000))
        userBurst = try reader.int("TOLLGATE_USER_BURST", default: userBurst, range: 1...100_000)
        coinGrants = try reader.bool("TOLLGATE_COIN_GRANTS", default: false)
        let sandboxText = reader.string("TOLLGATE_SANDBOX_VALUE", default: sandboxValue.rawValue)
        guard let policy = SandboxValue(rawValue: sandboxText.lowercased()) else {
            throw ConfigurationError(
                variable: "TOLLGATE_SANDBOX_VALUE", problem: "must be testers or everyone, not '\(sandboxText.prefix(32))'")
        }
        sandboxValue = policy
        let retentionDays = try reader.int(
            "TOLLGATE_USER_EVENTS_RETENTION_DAYS", default: userEventLog.retentionSeconds / 86_400, range: 1...3650)
        userEventLog = UserEventLog(
            retentionSeconds: retentionDays * 86_400,
            cap: try reader.int("TOLLGATE_USER_EVENTS_CAP", default: userEventLog.cap, range: 1...1_000_000))
        maxPendingOrders = try reader.int("TOLLGATE_MAX_PENDING_ORDERS", default: maxPendingOrders, range: 1...10_000)
        orderLifetime = try reader.duration("TOLLGATE_ORDER_TTL", default: orderLifetime, minimum: .seconds(1))
        maxReceiptBytes = try reader.int("TOLLGATE_MAX_RECEIPT_BYTES", default: maxReceiptBytes, range: 1024...(1 << 20))
        maxWaiters = try reader.int("TOLLGATE_MAX_WAITERS", default: maxWaiters, range: 0...1_000_000)
        userMaxWaiters = try reader.int("TOLLGATE_USER_MAX_WAITERS", default: userMaxWaiters, range: 0...10_000)
        idleTimeout = try reader.duration("TOLLGATE_HTTP_IDLE_TIMEOUT", default: idleTimeout, minimum: .milliseconds(100))
        bodyTimeout = try reader.duration("TOLLGATE_HTTP_BODY_TIMEOUT", default: bodyTimeout, minimum: .milliseconds(100))
        if let list = reader.optional("TOLLGATE_ROOT_CERTS") {
            do {
                rootCertificates = try TrustedRootLoader.load(list: list)
            } catch {
                throw ConfigurationError(variable: "TOLLGATE_ROOT_CERTS", problem: "is not usable: \(error.message)")
            }
        }
        let fromFile = reader.optional(AppRegistry.variable) != nil
        var offerKeys: [OfferSigningKey] = []
        for app in registry.apps {
            guard let key = app.offerKey else { continue }
            do {
                offerKeys.append(
                    try OfferSigningKey(keyId: key.keyId, issuerId: key.issuerId, bundleId: app.bundleId, privateKeyPEM: key.privateKeyPEM))
            } catch {
                throw fromFile
                    ? ConfigurationError(variable: AppRegistry.variable, problem: "has an unusable offerKey for \(app.bundleId)") : error
            }
        }
        offerKey = offerKeys.first { $0.bundleId == registry.defaultApp.bundleId }
        additionalOfferKeys = offerKeys.filter { $0.bundleId != registry.defaultApp.bundleId }
        opsHost = reader.string("TOLLGATE_OPS_HOST", default: opsHost)
        if reader.optional("TOLLGATE_OPS_PORT") != nil {
            opsPort = try reader.int("TOLLGATE_OPS_PORT", default: 0, range: 0...65535)
        }
        opsOnPublicListener = try reader.bool("TOLLGATE_OPS_ON_PUBLIC_LISTENER", default: false)
        enqueueQueueLimit = try reader.int("TOLLGATE_ENQUEUE_QUEUE_LIMIT", default: enqueueQueueLimit, range: 1...1_000_000)
        enqueueBatchSize = try reader.int("TOLLGATE_ENQUEUE_BATCH_SIZE", default: enqueueBatchSize, range: 1...10_000)
        enqueueBatchBytes = try reader.int("TOLLGATE_ENQUEUE_BATCH_BYTES", default: enqueueBatchBytes, range: 1...(64 << 20))
        enqueueRoundTrips = try reader.int("TOLLGATE_ENQUEUE_ROUND_TRIPS", default: enqueueRoundTrips, range: 1...256)
        waitReplicas = try reader.int("TOLLGATE_REDIS_WAIT_REPLICAS", default: waitReplicas, range: 0...100)
        waitTimeoutMilliseconds = try reader.int("TOLLGATE_REDIS_WAIT_TIMEOUT_MS", default: waitTimeoutMilliseconds, range: 1...60_000)
    }

    /// Each project's catalog and secret from `TOLLGATE_APPS` (docs/PROJECTS.md); `TOLLGATE_CATALOG` and
    /// `TOLLGATE_CLIENT_JWT_SECRET` may then not be set.
    private mutating func readProjects(_ registry: AppRegistry, _ reader: EnvironmentReader) throws(ConfigurationError) {
        if reader.optional("TOLLGATE_CLIENT_JWT_SECRET") != nil {
            throw ConfigurationError(
                variable: "TOLLGATE_CLIENT_JWT_SECRET",
                problem: "cannot be combined with projects in TOLLGATE_APPS: each project names its secret")
        }
        for project in registry.projects {
            projectApps[project.id] = project.bundleIds
            guard let path = project.catalogPath, let secret = project.clientJWTSecret else { continue }
            let catalog = try Catalog.ofProject(project.id, path: path, reader)
            if project.id.isDefault {
                self.catalog = catalog
                clientJWTSecret = secret
            } else {
                projects.append(ProjectSettings(id: project.id, catalog: catalog, clientJWTSecret: secret))
            }
        }
    }

    /// A byte budget: 0 (no limit) or at least 2 MiB, so that the largest submission always fits.
    private static func budget(_ reader: EnvironmentReader, _ name: String, default value: Int) throws(ConfigurationError) -> Int {
        let bytes = try reader.int(name, default: value, range: 0...Int(Int64(1) << 40))
        guard bytes == 0 || bytes >= 2 << 20 else {
            throw ConfigurationError(variable: name, problem: "must be 0 (no limit) or at least 2097152 bytes")
        }
        return bytes
    }
}
