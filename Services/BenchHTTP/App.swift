import Core
import Foundation

/// `bench-http`: URLSessionTransport against CurlTransport (issue 16). `scripts/bench-http` runs it.
///
///     bench-http serve [--port P] [--delay-us D]       a loopback HTTP/1.1 stub answering every POST after D µs
///     bench-http run --url URL [--requests N] [--in-flight 1,64] [--body-bytes B]
@main
struct App {
    static func main() async {
        TollgateVersion.answerIfAsked(tool: "bench-http")
        let arguments = Array(CommandLine.arguments.dropFirst())
        func option(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        do {
            switch arguments.first {
            case "serve":
                let delay = Int(option("--delay-us") ?? "1000") ?? 1000
                try LoopbackServer.serve(port: Int(option("--port") ?? "0") ?? 0, delay: .microseconds(delay))
            case "run":
                guard let text = option("--url"), let url = URL(string: text) else { throw BenchError("--url is required") }
                let inFlight = (option("--in-flight") ?? "1,64").split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
                let samples = try await Comparison.run(
                    url: url, requests: max(1, Int(option("--requests") ?? "2000") ?? 2000), inFlight: inFlight,
                    bodySize: Int(option("--body-bytes") ?? "4096") ?? 4096)
                Report.print(samples)
            default:
                throw BenchError("usage: bench-http serve [--port P] [--delay-us D] | run --url URL [--requests N] [--in-flight 1,64]")
            }
        } catch {
            FileHandle.standardError.write(Data("bench-http: \(error)\n".utf8))
            exit(1)
        }
    }
}
