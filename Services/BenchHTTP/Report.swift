import AppStore
import Foundation
import HTTPClient

/// The comparison as a table, the ratios (URLSession ÷ curl: above 1 means curl is better) and `key=value` lines.
enum Report {
    static func print(_ samples: [Comparison.Sample]) {
        Swift.print("transport    in-flight   p50 ms   p99 ms   CPU µs/call    calls/s  failures")
        for sample in samples {
            Swift.print(
                pad(sample.kind.rawValue, 12) + pad(String(sample.inFlight), 10, right: true)
                    + pad(ms(sample.p50), 9, right: true) + pad(ms(sample.p99), 9, right: true)
                    + pad(String(format: "%.1f", micros(sample.cpuPerCall)), 14, right: true)
                    + pad(String(format: "%.0f", sample.callsPerSecond), 11, right: true)
                    + pad(String(sample.failures), 10, right: true))
        }
        var lines: [String] = []
        for inFlight in Set(samples.map(\.inFlight)).sorted() {
            guard let session = samples.first(where: { $0.kind == .urlsession && $0.inFlight == inFlight }),
                let curl = samples.first(where: { $0.kind == .curl && $0.inFlight == inFlight })
            else { continue }
            Swift.print(
                "in flight \(inFlight): URLSession/curl p50 \(ratio(session.p50, curl.p50)), p99 \(ratio(session.p99, curl.p99)), "
                    + "CPU per call \(ratio(session.cpuPerCall, curl.cpuPerCall)), curl/URLSession calls/s "
                    + String(format: "%.2f", curl.callsPerSecond / max(session.callsPerSecond, 1e-9)))
            for sample in [session, curl] {
                let key = "\(sample.kind.rawValue)_\(inFlight)"
                lines += [
                    "\(key)_p50_ms=\(ms(sample.p50))", "\(key)_p99_ms=\(ms(sample.p99))",
                    "\(key)_cpu_us=\(String(format: "%.1f", micros(sample.cpuPerCall)))",
                    "\(key)_calls_per_s=\(String(format: "%.0f", sample.callsPerSecond))", "\(key)_failures=\(sample.failures)",
                ]
            }
        }
        for line in lines { Swift.print(line) }
    }

    private static func ms(_ duration: Duration) -> String { String(format: "%.3f", Comparison.seconds(duration) * 1000) }
    private static func micros(_ duration: Duration) -> Double { Comparison.seconds(duration) * 1e6 }
    private static func ratio(_ a: Duration, _ b: Duration) -> String {
        String(format: "%.2f", Comparison.seconds(a) / max(Comparison.seconds(b), 1e-12))
    }
    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }
}
