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

    @Option(
        name: .customLong("refused"),
        help: "A JWS the door check must refuse (a forgery); its refusals per second are measured too. Repeatable.")
    var refusedFiles: [String] = []

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
        // Ingest's check at the door (chain and leaf signature, no payload rules), on this JWS and on a forgery of
        // it (Apple's header and signature around another payload: the cached chain, then a failing signature).
        let door = try await Self.measureDoor(cached, jws: jws, seconds: max(1, seconds / 2), expectValid: true)
        let forgery = Self.forged(jws)
        let refused = try await Self.measureDoor(cached, jws: forgery, seconds: max(1, seconds / 2), expectValid: false)
        print("\(kind), one thread:")
        print(String(format: "cached:   %.0f verifications/s (chain cache hits %d, misses %d)", cachedRate, stats.hits, stats.misses))
        print(String(format: "uncached: %.0f verifications/s (full chain validation every time)", uncachedRate))
        print(
            String(
                format: "door:     %.0f signature checks/s (%.1f µs each; ingest's check of a V2 notification or signed transaction)",
                door, 1e6 / door))
        print(
            String(
                format: "forged:   %.0f forgeries refused/s (%.1f µs each; Apple's header and signature around another payload)",
                refused, 1e6 / refused))
        for path in refusedFiles {
            let other = try JWSInput.read(path)
            let rate = try await Self.measureDoor(cached, jws: other, seconds: max(1, seconds / 2), expectValid: false)
            print(String(format: "refused:  %.0f/s (%.1f µs each) %@", rate, 1e6 / rate, (path as NSString).lastPathComponent))
        }
    }

    /// `jws` with its payload segment replaced: Apple's chain and signature around another payload.
    static func forged(_ jws: String) -> String {
        var segments = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard segments.count == 3 else { return jws }
        segments[1] = Base64URL.encode(Data(#"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"forged"}"#.utf8))
        return segments.joined(separator: ".")
    }

    /// ``SignedDataVerifier/checkSignature(_:)`` in a loop for `seconds`; returns the rate.
    static func measureDoor(_ verifier: SignedDataVerifier, jws: String, seconds: Double, expectValid: Bool) async throws -> Double {
        try await rate(seconds: seconds, "the door check answered unexpectedly during the benchmark") {
            await (verifier.checkSignature(jws).value != nil) == expectValid
        }
    }

    /// Verifies `jws` with the method for its kind in a loop for `seconds`; returns the rate.
    static func measure(_ verifier: SignedDataVerifier, kind: String, jws: String, seconds: Double) async throws -> Double {
        try await rate(seconds: seconds, "verification failed during the benchmark") {
            await verifyOnce(verifier, kind: kind, jws: jws)
        }
    }

    /// Runs `attempt` in a loop for `seconds` (50 at a time); returns how many per second, or throws `failure` when
    /// one returns false.
    static func rate(seconds: Double, _ failure: String, _ attempt: () async -> Bool) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        var count = 0
        while clock.now < deadline {
            for _ in 0..<50 {
                guard await attempt() else { throw ValidationError(failure) }
            }
            count += 50
        }
        let elapsed = clock.now - start
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
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
