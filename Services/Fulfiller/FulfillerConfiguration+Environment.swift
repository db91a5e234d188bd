import Ledger
import Pipeline

extension FulfillerConfiguration {
    /// Reads and validates the keys listed on ``FulfillerConfiguration``; a missing or invalid value throws
    /// ``PipelineError/invalidConfiguration(variable:message:)`` naming the variable.
    public init(environment: [String: String]) throws(PipelineError) {
        let shared = try SharedConfiguration(environment: environment)
        guard let path = environment["TOLLGATE_CATALOG"], !path.isEmpty else {
            throw .invalidConfiguration(variable: "TOLLGATE_CATALOG", message: "is required (path of the catalog JSON)")
        }
        let catalog: Catalog
        do {
            catalog = try Catalog(contentsOf: path)
        } catch {
            throw .invalidConfiguration(variable: "TOLLGATE_CATALOG", message: error.description)
        }
        self.init(shared: shared, catalog: catalog)
        func int(_ name: String, _ fallback: Int, _ range: ClosedRange<Int>) throws(PipelineError) -> Int {
            guard let text = environment[name] else { return fallback }
            guard let value = Int(text), range.contains(value) else {
                throw .invalidConfiguration(variable: name, message: "must be a number in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
        switch environment["TOLLGATE_CLAMP_REFUNDS"]?.lowercased() {
        case nil, "", "false", "0", "no": clampRefunds = false
        case "true", "1", "yes": clampRefunds = true
        default: throw .invalidConfiguration(variable: "TOLLGATE_CLAMP_REFUNDS", message: "must be true or false")
        }
        metricsHost = environment["TOLLGATE_METRICS_HOST"] ?? metricsHost
        metricsPort = try int("TOLLGATE_METRICS_PORT", metricsPort, 0...65535)
        concurrency = try int("TOLLGATE_FULFILLER_CONCURRENCY", concurrency, 1...1024)
        claimMinIdle = .milliseconds(try int("TOLLGATE_CLAIM_MIN_IDLE_MS", 30_000, 100...86_400_000))
        claimInterval = .milliseconds(try int("TOLLGATE_CLAIM_INTERVAL_MS", 5000, 10...600_000))
        let retentionHours = try int("TOLLGATE_EVENTS_RETENTION_HOURS", 168, 0...87_600)
        eventsRetention = retentionHours == 0 ? nil : .seconds(retentionHours * 3600)
    }
}
