import Core
@preconcurrency import Crypto
import Foundation
import X509

extension SignedDataVerifier {
    /// A decoder shared by all calls; decoding keeps no state between calls.
    private static let decoder = JSONDecoder()

    /// The common path: format, algorithm, chain (cached), signature, decoding, validity at the
    /// validation time, then the kind-specific `claims` check.
    func verify<Payload: SignedPayload>(
        _ jws: String,
        as type: Payload.Type,
        claims: (Payload) -> VerificationFailure?
    ) async -> VerificationResult<VerifiedDocument<Payload>> {
        switch await verifySignature(jws) {
        case .verified(let envelope): return finish(envelope, as: type, claims: claims)
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
    }

    /// Decodes a verified envelope's payload, checks validity at the validation time and the claims.
    func finish<Payload: SignedPayload>(
        _ envelope: Envelope,
        as type: Payload.Type,
        claims: (Payload) -> VerificationFailure?
    ) -> VerificationResult<VerifiedDocument<Payload>> {
        let payload: Payload
        do {
            if let hand = Payload.self as? any HandDecodedPayload.Type {
                guard let read = try hand.init(json: JSONFields(JSONReader.parse(Array(envelope.json)))) as? Payload else {
                    return .rejected(.init(.invalidFormat, "payload is not a valid \(Payload.self)"))
                }
                payload = read
            } else {
                payload = try Self.decoder.decode(Payload.self, from: envelope.json)
            }
        } catch {
            return .rejected(.init(.invalidFormat, "payload is not a valid \(Payload.self)"))
        }
        if let failure = checkValidity(envelope.chain, signedDate: payload.signedDate) {
            return .rejected(failure)
        }
        if let failure = claims(payload) { return .rejected(failure) }
        return .verified(VerifiedDocument(payload: payload, json: envelope.json))
    }

    /// What a JWS proves before its payload is read: a trusted chain and a valid signature.
    struct Envelope: Sendable {
        let chain: ChainCache.Entry
        let json: Data
    }

    /// Checks everything that does not depend on the payload's content, cheapest first: the format, `alg`, that
    /// `x5c[2]` is byte for byte a trusted root, then — from the cache, keyed by the chain's DER, or by proving the
    /// chain — the leaf's ES256 signature over the JWS. Only then is a newly proven chain checked for revocation
    /// (online mode) and cached: a forged signature never makes Tollgate call OCSP, nor changes the cache.
    /// `budget` bounds the certificate checks spent on chains in no cache (``resolveChain(of:budget:)``); `nil`: no
    /// bound (the verifier, whose jobs passed a door already).
    func verifySignature(_ jws: String, budget: ChainCheckBudget? = nil) async -> VerificationResult<Envelope> {
        guard let compact = CompactJWS(jws) else {
            return .rejected(.init(.invalidFormat, "not a compact JWS with three segments"))
        }
        let headerSegment = compact.bytes[compact.header]
        var chain: ChainCache.Entry
        var key: ChainCache.Key
        var proven: CertificateChainValidator.ProvenChain?
        var seenHeader = false
        if let cached = chainCache.lookup(header: headerSegment), isFresh(cached.entry) {
            // The very header of a JWS that verified before (same bytes: same alg, same x5c).
            (key, chain, seenHeader) = (cached.key, cached.entry, true)
        } else {
            switch await resolveChain(of: compact, budget: budget) {
            case .verified(let found): (key, chain, proven) = found
            case .rejected(let failure): return .rejected(failure)
            case .retryable(let failure): return .retryable(failure)
            }
        }
        guard let signatureBytes = compact.decode(compact.signature) else {
            return .rejected(.init(.invalidFormat, "signature segment is not base64url"))
        }
        guard signatureBytes.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else {
            return .rejected(.init(.invalidSignature, "signature is not a raw 64-byte ES256 r||s value"))
        }
        let valid = compact.bytes.withUnsafeBytes { buffer in
            chain.leafKey.isValidSignature(signature, for: UnsafeRawBufferPointer(rebasing: buffer[compact.signingInput]))
        }
        guard valid else {
            // Online, a chain is cached only once OCSP said it is not revoked: nothing to remember then.
            if let proven, revocationChecker == nil { chainCache.rememberProven(key, entry: proven.entry) }
            return .rejected(.init(.invalidSignature, "signature does not verify under the leaf key"))
        }
        if let proven {
            if let revocationChecker {
                // Expired certificates get no OCSP answer worth having; report the expiry instead.
                if let failure = checkValidity(proven.entry, signedDate: nil) { return .rejected(failure) }
                switch await revocationChecker.check(leaf: proven.leaf, intermediate: proven.intermediate) {
                case .verified: break
                case .rejected(let failure): return .rejected(failure)
                case .retryable(let failure): return .retryable(failure)
                }
            }
            chainCache.insert(key, entry: proven.entry, header: headerSegment)
            chain = proven.entry
        } else if !seenHeader {
            chainCache.confirm(key, header: headerSegment)
        }
        guard let payload = compact.decode(compact.payload) else {
            return .rejected(.init(.invalidFormat, "payload segment is not base64url"))
        }
        return .verified(Envelope(chain: chain, json: Data(payload)))
    }

    /// The chain a header names, cheapest check first: `alg`, then that `x5c[2]` is byte for byte a trusted root,
    /// then the cache (keyed by the chain's DER) of proven and of refused chains, else proving it (returned in
    /// `proven`, to be cached once the JWS's signature verified).
    ///
    /// A chain in no cache is proven one certificate at a time, each check remembered either way
    /// (``prefilter(_:key:budget:)``): the intermediate against the trusted roots (once per intermediate), then the
    /// leaf against the intermediate; only a leaf the intermediate really signed goes on to the whole validation. So
    /// a refused chain, or any chain naming a refused intermediate, costs a lookup; a new broken leaf under a known
    /// intermediate one signature check, taken from `budget`.
    private func resolveChain(of compact: CompactJWS, budget: ChainCheckBudget?) async
        -> VerificationResult<(key: ChainCache.Key, entry: ChainCache.Entry, proven: CertificateChainValidator.ProvenChain?)>
    {
        guard let headerBytes = compact.decode(compact.header),
            let header = try? JWSHeader.read(headerBytes)
        else {
            return .rejected(.init(.invalidFormat, "header is not base64url JSON"))
        }
        guard header.alg == "ES256" else {
            return .rejected(.init(.unsupportedAlgorithm, "alg must be ES256, found \(header.alg ?? "none")"))
        }
        guard let x5c = header.x5c, !x5c.isEmpty else {
            return .rejected(.init(.invalidFormat, "header has no x5c certificate chain"))
        }
        guard x5c.count == 3 else {
            return .rejected(.init(.invalidChain, "x5c must hold exactly 3 certificates, found \(x5c.count)"))
        }
        var certificates: [[UInt8]] = []
        for (index, encoded) in x5c.enumerated() {
            guard let der = Data(base64Encoded: encoded) else {
                return .rejected(.init(.invalidChain, "x5c[\(index)] is not base64"))
            }
            certificates.append(Array(der))
        }
        guard trustedRootsDER.contains(certificates[2]) else {
            return .rejected(.init(.invalidChain, "x5c[2] is not a trusted root"))
        }
        let key = ChainCache.Key(certificates: certificates)
        if let cached = chainCache.lookup(key), isFresh(cached) {
            // Confirmed, or proven under a forged signature (then not yet confirmed: `proven` stays nil either
            // way, and a verified signature below only remembers the header).
            return .verified((key, cached, nil))
        }
        if let refused = chainCache.refusal(key) { return .rejected(refused) }
        let proof = await proofsInFlight.run(key) { [self, certificates] in await prove(certificates, key: key, budget: budget) }
        switch proof {
        case .verified(let proven): return .verified((key, proven.entry, proven))
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
    }

    /// Proves a chain in no cache: the checks of ``prefilter(_:key:budget:)``, then the whole validation; a refusal
    /// is remembered.
    private func prove(
        _ certificates: [[UInt8]], key: ChainCache.Key, budget: ChainCheckBudget?
    ) async -> VerificationResult<CertificateChainValidator.ProvenChain> {
        switch prefilter(certificates, key: key, budget: budget) {
        case .verified: break
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
        chainCache.count(.validation)
        switch await chainValidator.validate(der: certificates, now: nowMilliseconds()) {
        case .success(let proven):
            chainCache.remember(intermediate: certificates[1], .proven(proven.intermediate))
            return .verified(proven)
        case .failure(let failure):
            chainCache.refuse(key, failure)
            return .rejected(failure)
        }
    }

    /// The checks a chain in no cache passes before it is validated whole: its intermediate is one a trusted root
    /// signed (remembered either way, so each intermediate is checked once), and its leaf is one that intermediate
    /// signed (a refused chain is remembered). One signature check each, each taken from `budget`: when it is
    /// spent, the check is retryable (`chain_check_deferred`) and costs nothing more.
    private func prefilter(_ certificates: [[UInt8]], key: ChainCache.Key, budget: ChainCheckBudget?) -> VerificationResult<Void> {
        let intermediate: Certificate
        switch chainCache.intermediate(certificates[1]) {
        case .proven(let known)?:
            intermediate = known
        case .refused(let failure)?:
            chainCache.refuse(key, failure)
            return .rejected(failure)
        case nil:
            if let deferred = spend(budget) { return .retryable(deferred) }
            chainCache.count(.intermediateCheck)
            switch chainValidator.checkIntermediate(der: certificates[1]) {
            case .success(let checked):
                chainCache.remember(intermediate: certificates[1], .proven(checked))
                intermediate = checked
            case .failure(let failure):
                chainCache.remember(intermediate: certificates[1], .refused(failure))
                chainCache.refuse(key, failure)
                return .rejected(failure)
            }
        }
        if let deferred = spend(budget) { return .retryable(deferred) }
        chainCache.count(.leafCheck)
        if let failure = chainValidator.checkLeaf(der: certificates[0], issuedBy: intermediate) {
            chainCache.refuse(key, failure)
            return .rejected(failure)
        }
        return .verified(())
    }

    /// A token of `budget`, or the retryable failure to answer when none is left (`nil`: no budget, no bound).
    private func spend(_ budget: ChainCheckBudget?) -> VerificationFailure? {
        guard let budget, !budget.take() else { return nil }
        chainCache.count(.deferred)
        return .init(.chainCheckDeferred, "too many certificate chains never seen before are being checked; retry later")
    }

    /// Offline, a proven chain stays proven; online, it is re-proven (and re-checked for revocation)
    /// after `onlineChainLifetime`.
    private func isFresh(_ entry: ChainCache.Entry) -> Bool {
        guard configuration.onlineChecks else { return true }
        return nowMilliseconds() - entry.provenAt < Int64(configuration.onlineChainLifetime * 1000)
    }

    func nowMilliseconds() -> Int64 {
        Int64((now().timeIntervalSince1970 * 1000).rounded())
    }

    /// The validation time: now when online or when the payload has no `signedDate`, else `signedDate`.
    func validationTime(signedDate: Int64?) -> Int64 {
        if !configuration.onlineChecks, let signedDate { return signedDate }
        return nowMilliseconds()
    }

    func checkValidity(_ chain: ChainCache.Entry, signedDate: Int64?) -> VerificationFailure? {
        let time = validationTime(signedDate: signedDate)
        for window in chain.windows where time < window.notBefore || time > window.notAfter {
            let when = Date(timeIntervalSince1970: Double(time) / 1000)
            let state = time < window.notBefore ? "not yet valid" : "expired"
            return .init(.certificateExpired, "\(window.role) certificate \(state) at \(when) (validation time)")
        }
        return nil
    }
}
