package import Metrics
import Synchronization

/// Metric handles made once per label and dimensions, then reused. `Counter(label:dimensions:)` asks the metrics
/// factory every time it is made: a lock, and the Prometheus registry's lookup of the name and labels it builds
/// from them. Made per job (as each job's counters and timers were), that was 3–5 % of the fulfiller's CPU.
///
/// Dimensions must come from small fixed sets (outcomes, codes, routes, stream names), as for any metric: each
/// distinct set is one handle here and one series in the registry.
///
/// Nothing reaches for a process-wide cache: a service's builder makes one on its registry's factory and hands it to
/// what records (the stream consumer, its promoter and janitor, the service's own metrics). It lives in `Pipeline`,
/// not `ServiceKit`, because the stream runtime records through it and `Pipeline` must not depend on `ServiceKit`.
package final class MetricHandles: Sendable {
    private struct Key: Hashable {
        var label: String
        var dimensions: [String]

        init(_ label: String, _ dimensions: [(String, String)]) {
            self.label = label
            self.dimensions = dimensions.flatMap { [$0.0, $0.1] }
        }
    }

    /// The factory every handle is made by.
    package let factory: any MetricsFactory
    private let counters = Mutex<[Key: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[Key: CoreMetrics.Timer]>([:])
    private let gauges = Mutex<[Key: CoreMetrics.Gauge]>([:])

    /// Handles from `factory`, by default the one `MetricsSystem` was bootstrapped with when this is made (tests that
    /// read no metrics take the default; a handle made before bootstrapping stays a no-op).
    package init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
    }

    package func counter(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Counter {
        handle(in: counters, Key(label, dimensions)) { CoreMetrics.Counter(label: label, dimensions: dimensions, factory: factory) }
    }

    package func timer(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        handle(in: timers, Key(label, dimensions)) { CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory) }
    }

    package func gauge(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Gauge {
        handle(in: gauges, Key(label, dimensions)) { CoreMetrics.Gauge(label: label, dimensions: dimensions, factory: factory) }
    }

    private func handle<Handle: Sendable>(
        in cache: borrowing Mutex<[Key: Handle]>, _ key: Key, make: () -> Handle
    ) -> Handle {
        cache.withLock { cached in
            if let handle = cached[key] { return handle }
            let handle = make()
            cached[key] = handle
            return handle
        }
    }
}
