import AppStore
package import Core
import Ledger
import Pipeline
import ServiceKit

extension FulfillerConfiguration: ServiceConfiguration {
    /// Reads and validates the keys listed on ``FulfillerConfiguration`` by ``Core/EnvironmentReader``'s rules;
    /// a missing or invalid value throws a ``Core/ConfigurationError`` naming the variable.
    package init(environment: [String: String]) throws(ConfigurationError) {
        let reader = EnvironmentReader(environment)
        let shared = try SharedConfiguration(reader: reader)
        let registry = reader.optional(AppRegistry.variable) == nil ? nil : try AppRegistry(reader: reader)
        if let registry, registry.hasProjects {
            self.init(shared: shared, catalog: .empty)
            for project in registry.projects {
                guard let path = project.catalogPath else { continue }
                let catalog = try Catalog.ofProject(project.id, path: path, reader)
                if project.id.isDefault { self.catalog = catalog } else { projectCatalogs[project.id] = catalog }
            }
        } else {
            self.init(shared: shared, catalog: try Catalog.configured(reader))
        }
        clampRefunds = try reader.bool("TOLLGATE_CLAMP_REFUNDS", default: clampRefunds)
        metricsHost = reader.string("TOLLGATE_METRICS_HOST", default: metricsHost)
        metricsPort = try reader.int("TOLLGATE_METRICS_PORT", default: metricsPort, range: 0...65535)
        concurrency = try reader.int("TOLLGATE_FULFILLER_CONCURRENCY", default: concurrency, range: 1...1024)
        claimMinIdle = try reader.milliseconds("TOLLGATE_CLAIM_MIN_IDLE_MS", default: 30_000, range: 100...86_400_000)
        claimInterval = try reader.milliseconds("TOLLGATE_CLAIM_INTERVAL_MS", default: 5000, range: 10...600_000)
        waitReplicas = try reader.int("TOLLGATE_REDIS_WAIT_REPLICAS", default: waitReplicas, range: 0...100)
        waitTimeoutMilliseconds = try reader.int(
            "TOLLGATE_REDIS_WAIT_TIMEOUT_MS", default: waitTimeoutMilliseconds, range: 1...60_000)
        let retentionHours = try reader.int("TOLLGATE_EVENTS_RETENTION_HOURS", default: 168, range: 0...87_600)
        eventsRetention = retentionHours == 0 ? nil : .seconds(retentionHours * 3600)
        let idleHours = try reader.int("TOLLGATE_EVENTS_GROUP_IDLE_LIMIT_HOURS", default: 168, range: 0...87_600)
        let maxMegabytes = try reader.int("TOLLGATE_EVENTS_MAX_MB", default: 1024, range: 0...1_048_576)
        eventsBounds = StreamBounds(
            groupIdleLimit: idleHours == 0 ? nil : .seconds(idleHours * 3600),
            maxBytes: maxMegabytes == 0 ? nil : maxMegabytes * 1_048_576)
        let repeatTrial = reader.string("TOLLGATE_REPEAT_FREE_TRIAL", default: repeatFreeTrial.rawValue)
        guard let policy = RepeatFreeTrial(rawValue: repeatTrial.lowercased()) else {
            throw ConfigurationError(
                variable: "TOLLGATE_REPEAT_FREE_TRIAL", problem: "must be allow or refuse, not '\(repeatTrial.prefix(32))'")
        }
        repeatFreeTrial = policy
        let logDays = try reader.int(
            "TOLLGATE_USER_EVENTS_RETENTION_DAYS", default: userEventLog.retentionSeconds / 86_400, range: 1...3650)
        userEventLog = UserEventLog(
            retentionSeconds: logDays * 86_400,
            cap: try reader.int("TOLLGATE_USER_EVENTS_CAP", default: userEventLog.cap, range: 1...1_000_000))
    }
}
