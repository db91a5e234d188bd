import AppStore
import Foundation

#if canImport(Glibc)
import Glibc
import HTTPClient
#endif

/// Runs the same calls through each transport, one after the other in one process, and reports latency (p50,
/// p99), throughput and this process's CPU time (user + system, `getrusage`) per call.
enum Comparison {
    struct Sample {
        var kind: HTTPTransportKind
        var inFlight: Int
        var p50: Duration
        var p99: Duration
        var cpuPerCall: Duration
        var callsPerSecond: Double
        var failures: Int
    }

    static func run(url: URL, requests: Int, inFlight: [Int], bodySize: Int) async throws -> [Sample] {
        let body = Data((0..<bodySize).map { _ in UInt8(ascii: "A") })
        var samples: [Sample] = []
        for concurrency in inFlight {
            for kind in HTTPTransportKind.allCases.reversed() {
                let transport = kind.make(maximumConnectionsPerHost: 64)
                _ = await calls(transport, url: url, body: body, count: max(200, 4 * concurrency), inFlight: concurrency)
                let cpuBefore = cpuTime()
                let started = ContinuousClock.now
                let (latencies, failures) = await calls(transport, url: url, body: body, count: requests, inFlight: concurrency)
                let elapsed = ContinuousClock.now - started
                let cpu = cpuTime() - cpuBefore
                let sorted = latencies.sorted()
                samples.append(
                    Sample(
                        kind: kind, inFlight: concurrency, p50: percentile(sorted, 0.50), p99: percentile(sorted, 0.99),
                        cpuPerCall: cpu / requests, callsPerSecond: Double(requests) / seconds(elapsed), failures: failures))
            }
        }
        return samples
    }

    /// `count` POSTs, `inFlight` at a time; each call's latency and how many failed.
    private static func calls(
        _ transport: any HTTPTransport, url: URL, body: Data, count: Int, inFlight: Int
    ) async -> ([Duration], Int) {
        await withTaskGroup(of: ([Duration], Int).self) { group in
            for worker in 0..<inFlight {
                let share = count / inFlight + (worker < count % inFlight ? 1 : 0)
                group.addTask {
                    var latencies: [Duration] = []
                    latencies.reserveCapacity(share)
                    var failures = 0
                    for _ in 0..<share {
                        let started = ContinuousClock.now
                        let request = HTTPTransportRequest(
                            method: .post, url: url, headers: ["Content-Type": "application/json"], body: body, timeout: .seconds(10))
                        let response = try? await transport.send(request)
                        if response?.status != 200 { failures += 1 }
                        latencies.append(ContinuousClock.now - started)
                    }
                    return (latencies, failures)
                }
            }
            return await group.reduce(into: ([Duration](), 0)) {
                $0.0 += $1.0
                $0.1 += $1.1
            }
        }
    }

    private static func percentile(_ sorted: [Duration], _ fraction: Double) -> Duration {
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))]
    }

    /// This process's user + system CPU time so far.
    private static func cpuTime() -> Duration {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func duration(_ time: timeval) -> Duration { .seconds(time.tv_sec) + .microseconds(time.tv_usec) }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
