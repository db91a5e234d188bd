import AppStore
import ArgumentParser
import Foundation

/// `tollctl bench-verify`: verifications per second of one JWS on one core, with and without the chain
/// cache.
struct BenchVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-verify",
        abstract: "Measure JWS verifications per second on one core (single-threaded loop)."
    )

    @Option(name: .customLong("root"), help: "Trusted root certificate (DER or PEM); repeatable.")
    var roots: [String] = []

    @Option(help: "Seconds to run each measurement.")
    var seconds: Double = 5

    @Argument(help: "File holding the JWS.")
    var file: String

    func run() async throws {
        let jws = try JWSInput.read(file)
        let options = VerifyOptions(roots: roots, bundleId: nil, environment: nil, appAppleId: nil)
        let cached = try options.makeVerifier(for: jws, notes: false)
        let kind: String
        switch await cached.verifyAny(jws) {
        case .verified(let data): kind = data.kind
        case .rejected(let failure), .retryable(let failure):
            StandardError.write("error: \(failure.code.rawValue): \(failure.message)")
            throw ExitCode(1)
        }
        let cachedRate = try await Self.measure(cached, kind: kind, jws: jws, seconds: seconds)
        let uncached = try options.makeVerifier(for: jws, notes: false, chainCacheCapacity: 0)
        let uncachedRate = try await Self.measure(uncached, kind: kind, jws: jws, seconds: max(1, seconds / 5))
        let stats = cached.chainCache.statistics
        print("\(kind), one thread:")
        print(String(format: "cached:   %.0f verifications/s (chain cache hits %d, misses %d)", cachedRate, stats.hits, stats.misses))
        print(String(format: "uncached: %.0f verifications/s (full chain validation every time)", uncachedRate))
    }

    /// Verifies `jws` with the method for its kind in a loop for `seconds`; returns the rate.
    static func measure(_ verifier: SignedDataVerifier, kind: String, jws: String, seconds: Double) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        var count = 0
        while clock.now < deadline {
            for _ in 0..<50 {
                guard await verifyOnce(verifier, kind: kind, jws: jws) else {
                    throw ValidationError("verification failed during the benchmark")
                }
            }
            count += 50
        }
        let elapsed = clock.now - start
        let secondsElapsed = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(count) / secondsElapsed
    }

    private static func verifyOnce(_ verifier: SignedDataVerifier, kind: String, jws: String) async -> Bool {
        switch kind {
        case "transaction": return await verifier.verifyTransaction(jws).value != nil
        case "renewalInfo": return await verifier.verifyRenewalInfo(jws).value != nil
        case "notification": return await verifier.verifyNotification(jws).value != nil
        default: return await verifier.verifyAny(jws).value != nil
        }
    }
}
