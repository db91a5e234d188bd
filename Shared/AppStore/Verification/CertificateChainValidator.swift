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
    struct ProvenChain: Sendable {
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

    /// The cheap half of a chain's proof, one certificate at a time, for chains in no cache: whether `der` is an
    /// intermediate a trusted root signed, with Apple's WWDR OID. Names and the OID are compared before the one
    /// signature check. Necessary, not sufficient: a chain that passes this and ``checkLeaf(der:issuedBy:)`` is still
    /// proven whole by ``validate(der:now:)``.
    func checkIntermediate(der: [UInt8]) -> Result<Certificate, VerificationFailure> {
        guard let intermediate = try? Certificate(derEncoded: der) else {
            return .failure(.init(.invalidChain, "x5c[1] is not a DER certificate"))
        }
        guard intermediate.extensions[oid: AppleChainPolicy.intermediateOID] != nil else {
            return .failure(.init(.invalidChain, "intermediate lacks Apple WWDR OID 1.2.840.113635.100.6.2.1"))
        }
        let issuers = roots.filter { $0.subject == intermediate.issuer }
        guard !issuers.isEmpty else {
            return .failure(.init(.invalidChain, "the intermediate is not issued by a trusted root"))
        }
        guard issuers.contains(where: { $0.publicKey.isValidSignature(intermediate.signature, for: intermediate) }) else {
            return .failure(.init(.invalidChain, "the intermediate's signature does not verify under the trusted root"))
        }
        return .success(intermediate)
    }

    /// Whether `der` is a P-256 leaf with Apple's receipt-signing OID that `intermediate` signed (one signature check,
    /// after the names, the key type and the OID). Necessary, not sufficient, as ``checkIntermediate(der:)``.
    func checkLeaf(der: [UInt8], issuedBy intermediate: Certificate) -> VerificationFailure? {
        guard let leaf = try? Certificate(derEncoded: der) else { return .init(.invalidChain, "x5c[0] is not a DER certificate") }
        guard P256.Signing.PublicKey(leaf.publicKey) != nil else { return .init(.invalidChain, "leaf key is not P-256") }
        guard leaf.extensions[oid: AppleChainPolicy.leafOID] != nil else {
            return .init(.invalidChain, "leaf lacks Apple receipt-signing OID 1.2.840.113635.100.6.11.1")
        }
        guard leaf.issuer == intermediate.subject else { return .init(.invalidChain, "the leaf is not issued by x5c[1]") }
        guard intermediate.publicKey.isValidSignature(leaf.signature, for: leaf) else {
            return .init(.invalidChain, "the leaf's signature does not verify under x5c[1]")
        }
        return nil
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
