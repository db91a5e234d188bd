package import Core
import Pipeline
import ServiceKit
import Webhooks

extension NotifierConfiguration: ServiceConfiguration {
    /// Reads and validates the keys listed on ``NotifierConfiguration`` by ``Core/EnvironmentReader``'s rules;
    /// a missing or invalid value throws a ``Core/ConfigurationError`` naming the variable.
    package init(environment: [String: String]) throws(ConfigurationError) {
        let reader = EnvironmentReader(environment)
        let shared = try SharedConfiguration(reader: reader)
        let webhooks = try WebhookSettings(reader: reader)
        guard !webhooks.endpoints.isEmpty else {
            throw ConfigurationError(variable: "TOLLGATE_WEBHOOK_URL", problem: "or TOLLGATE_WEBHOOKS is required")
        }
        self.init(shared: shared, webhooks: webhooks)
        delivery.horizon = try reader.duration("TOLLGATE_WEBHOOK_HORIZON", default: delivery.horizon, minimum: .seconds(1))
        delivery.concurrency = try reader.int("TOLLGATE_WEBHOOK_CONCURRENCY", default: delivery.concurrency, range: 1...1024)
        delivery.lease = try reader.duration("TOLLGATE_WEBHOOK_LEASE", default: delivery.lease, minimum: .seconds(1))
        delivery.retry.cap = try reader.duration("TOLLGATE_WEBHOOK_RETRY_CAP", default: delivery.retry.cap, minimum: .seconds(1))
        delivery.pollInterval = try reader.milliseconds("TOLLGATE_WEBHOOK_POLL_MS", default: 200, range: 1...10_000)
        delivery.pollMinimum = min(
            try reader.milliseconds("TOLLGATE_WEBHOOK_POLL_MIN_MS", default: 25, range: 1...10_000), delivery.pollInterval)
        delivery.breakerThreshold = try reader.int(
            "TOLLGATE_WEBHOOK_BREAKER_THRESHOLD", default: delivery.breakerThreshold, range: 1...1000)
        delivery.deadMax = try reader.int("TOLLGATE_WEBHOOK_DEAD_MAX", default: delivery.deadMax, range: 1...100_000_000)
        guard delivery.lease >= webhooks.timeout + .seconds(1) else {
            throw ConfigurationError(
                variable: "TOLLGATE_WEBHOOK_LEASE", problem: "must be at least a second longer than TOLLGATE_WEBHOOK_TIMEOUT")
        }
        metricsHost = reader.string("TOLLGATE_METRICS_HOST", default: metricsHost)
        metricsPort = try reader.int("TOLLGATE_METRICS_PORT", default: metricsPort, range: 0...65535)
    }
}
