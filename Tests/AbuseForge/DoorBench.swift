import AppStore
import AppStoreTesting
import Foundation

/// The notification door's cost per refused JWS, in-process on one thread: each attack beside a forged signature on
/// a cached chain (the cheapest refusal, and the issue's yardstick), and the whole chain validation every check made
/// before the door remembered refusals.
enum DoorBench {
    static func run(vector: String, root: String, count: Int) async throws {
        let jws = String(decoding: try Data(contentsOf: URL(fileURLWithPath: vector)), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let roots = try TrustedRootLoader.load(path: root)
        guard let compact = CompactJWS(jws), let headerBytes = compact.decode(compact.header),
            let x5c = try JWSHeader.read(headerBytes).x5c?.compactMap({ Data(base64Encoded: $0) }), x5c.count == 3
        else { throw ForgeError("\(vector) is not a JWS with a three-certificate x5c") }
        func verifier(capacity: Int = 64) throws -> SignedDataVerifier {
            try SignedDataVerifier(
                configuration: SignedDataVerifierConfiguration(
                    rootCertificates: roots, bundleId: nil, environment: nil, allowsMissingAppAppleId: true,
                    chainCacheCapacity: capacity))
        }
        let payload = Data(#"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"forged"}"#.utf8)
        let forged = Self.replacingPayload(jws, with: payload)

        // The yardstick: Apple's header and signature around another payload, the chain cached.
        let cached = try verifier()
        guard await cached.checkSignature(jws).value != nil else { throw ForgeError("the vector does not verify under --root") }
        let yardstick = try await measure(count) { _ in await cached.checkSignature(forged).failure?.code == .invalidSignature }

        // Before: a broken chain validated whole on every request (no cache at all).
        let uncached = try verifier(capacity: 0)
        let brokenOnce = try ChainForgery.brokenLeaf(x5c: x5c).sign(json: payload)
        let before = try await measure(max(1, count / 50)) { _ in await uncached.checkSignature(brokenOnce).failure != nil }

        // A refused chain sent again: a lookup.
        let refusing = try verifier()
        _ = await refusing.checkSignature(jws)
        let replayed = try await measure(count) { _ in await refusing.checkSignature(brokenOnce).failure?.code == .invalidChain }

        // A new broken leaf with every request, under the genuine intermediate: one leaf check each.
        let leaves = try (0..<400).map { _ in try ChainForgery.brokenLeaf(x5c: x5c).sign(json: payload) }
        let fresh = try await measure(leaves.count) { index in
            await refusing.checkSignature(leaves[index]).failure?.code == .invalidChain
        }
        // A new impostor intermediate with every request: one intermediate check each.
        let impostors = try (0..<400).map { _ in try ChainForgery.impostorIntermediate(x5c: x5c).sign(json: payload) }
        let impostor = try await measure(impostors.count) { index in
            await refusing.checkSignature(impostors[index]).failure?.code == .invalidChain
        }
        // New ones past the door's budget: deferred without a signature check.
        let spent = ChainCheckBudget(ratePerSecond: 0, capacity: 1)
        _ = spent.take()
        let unseen = try (0..<400).map { _ in try ChainForgery.brokenLeaf(x5c: x5c).sign(json: payload) }
        let deferred = try await measure(unseen.count) { index in
            await refusing.checkSignature(unseen[index], budget: spent).failure?.code == .chainCheckDeferred
        }

        print("the notification door, one thread, µs per check (ratio to a forged signature on a cached chain):")
        for (name, micros) in [
            ("forged signature, cached chain", yardstick), ("broken chain, validated whole (before)", before),
            ("refused chain sent again", replayed), ("new broken leaf each time (leaf check)", fresh),
            ("new impostor intermediate each time", impostor), ("new broken leaf, budget spent", deferred),
        ] {
            let label = name.padding(toLength: 42, withPad: " ", startingAt: 0)
            print("  \(label) \(String(format: "%8.1f µs  %5.2fx", micros, micros / yardstick))")
        }
    }

    /// `jws` with its payload segment replaced (the header and signature kept).
    static func replacingPayload(_ jws: String, with payload: Data) -> String {
        var segments = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if segments.count == 3 { segments[1] = Base64URL.encode(payload) }
        return segments.joined(separator: ".")
    }

    /// µs per call of `attempt`, called `count` times with the call's index; throws when one answers unexpectedly.
    static func measure(_ count: Int, _ attempt: (Int) async -> Bool) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for index in 0..<count {
            guard await attempt(index) else { throw ForgeError("a check answered unexpectedly (call \(index))") }
        }
        let elapsed = clock.now - start
        return (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(max(1, count))
    }
}
