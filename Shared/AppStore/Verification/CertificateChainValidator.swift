@preconcurrency import Crypto
import Foundation
import SwiftASN1
@_spi(DisableValidityCheck) import X509

/// The expensive half of JWS verification, done once per distinct chain: parses the `x5c` certificates
/// and proves leaf → intermediate → configured root with swift-certificates (RFC 5280 path rules plus
/// `AppleChainPolicy`). Validity windows are not checked here: they depend on each JWS's validation
/// time and are checked per JWS from the cached windows.
struct CertificateChainValidator: Sendable {
    let roots: [Certificate]

    /// A proven chain: the cache entry and the certificates (for an online revocation check).
    struct ProvenChain {
        let entry: ChainCache.Entry
        let leaf: Certificate
        let intermediate: Certificate
    }

    /// Proves a chain given as the DER of `x5c` (leaf, intermediate, root).
    func validate(der x5c: [[UInt8]], now: Int64) async -> Result<ProvenChain, VerificationFailure> {
        guard x5c.count == 3 else {
            return .failure(.init(.invalidChain, "x5c must hold exactly 3 certificates, found \(x5c.count)"))
        }
        var certificates: [Certificate] = []
        for (index, der) in x5c.enumerated() {
            guard let certificate = try? Certificate(derEncoded: der) else {
                return .failure(.init(.invalidChain, "x5c[\(index)] is not a DER certificate"))
            }
            certificates.append(certificate)
        }
        let leaf = certificates[0]
        let intermediate = certificates[1]
        let presentedRoot = certificates[2]
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            return .failure(.init(.invalidChain, "leaf key is not P-256"))
        }

        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            AppleChainPolicy()
            RFC5280Policy.withValidityCheckDisabled()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate(let chain) = result else {
            var reason = "chain does not lead to a trusted root with Apple's OIDs"
            if case .couldNotValidate(let failures) = result, let first = failures.first {
                reason += " (\(first.policyFailureReason))"
            }
            return .failure(.init(.invalidChain, reason))
        }
        let path = Array(chain)
        guard path.count == 3, path[1] == intermediate else {
            return .failure(.init(.invalidChain, "chain does not run through x5c[1]"))
        }
        // x5c[2] must be the trusted root the path ended at, not arbitrary bytes riding along.
        guard path[2] == presentedRoot else {
            return .failure(.init(.invalidChain, "x5c[2] is not the trusted root the chain leads to"))
        }
        let windows = zip(["leaf", "intermediate", "root"], path).map { role, certificate in
            ChainCache.ValidityWindow(
                role: role,
                notBefore: Self.milliseconds(certificate.notValidBefore),
                notAfter: Self.milliseconds(certificate.notValidAfter)
            )
        }
        return .success(
            ProvenChain(
                entry: ChainCache.Entry(leafKey: leafKey, windows: windows, provenAt: now),
                leaf: leaf, intermediate: intermediate
            ))
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
