package import Foundation
import SwiftASN1
import Synchronization
package import X509

/// Proves that Apple signed an app receipt, offline: the PKCS#7 `SignedData` has exactly one signer, without
/// signed attributes (Apple's and Xcode's receipts have none); its certificate chains leaf → intermediate →
/// trusted root under Apple's policy (``AppleChainPolicy``: the receipt-signing OID on the leaf, the WWDR OID on
/// the intermediate) and RFC 5280 at the receipt's creation date; and its signature over the receipt payload
/// verifies. Then the receipt's contents are Apple's words.
///
/// Without this, a receipt is only a claim: anyone can write a PKCS#7 file naming a transaction ID they found or
/// guessed, and the App Store Server API would answer for that customer's purchases.
///
/// **Bounded work.** The certificates a receipt carries are the sender's choice, so they are reduced to the shape
/// Apple signs with before any path is searched: at most ``maximumCertificates`` of them (else
/// `receipt_too_many_certificates`), of which only the signer's certificate and one intermediate byte for byte equal
/// to a configured receipt-signing intermediate (``AppleRootCertificates/receiptIntermediates`` by default) take
/// part; anything else (an embedded root, certificates cross-signing each other) is ignored. The path search then
/// has one candidate per step, and a receipt costs at most three signature checks: the intermediate's, the leaf's
/// and the content's. (Handed every embedded certificate, swift-certificates' depth-first search tries every
/// ordering of certificates that cross-sign each other: about ten times the work per key, hours for a 38 KB receipt.)
package struct ReceiptSignatureVerifier: Sendable {
    let roots: [Certificate]
    /// The intermediates a receipt's chain may run through, by their DER.
    let intermediates: [[UInt8]: Certificate]
    /// Receipts carrying more certificates are refused before any is read (Apple's carry three: the signing
    /// certificate, the WWDR intermediate and Apple Inc. Root).
    let maximumCertificates: Int
    /// Chains already proven (after a receipt they carried verified): a hit skips parsing and validating the
    /// certificates, leaving the receipt's own signature and the validity window at its creation date.
    let proven = ProvenReceiptChains()

    package static let defaultMaximumCertificates = 4

    /// - Parameters:
    ///   - rootCertificates: DER roots; receipts chain to Apple Inc. Root (``AppleRootCertificates/appleIncRoot``).
    ///   - intermediateCertificates: DER of the receipt-signing intermediates (Apple's WWDR,
    ///     ``AppleRootCertificates/receiptIntermediates``).
    package init(
        rootCertificates: [Data], intermediateCertificates: [Data], maximumCertificates: Int = defaultMaximumCertificates
    ) throws(SignedDataVerifierConfigurationError) {
        var roots: [Certificate] = []
        for der in rootCertificates {
            guard let root = try? Certificate(derEncoded: Array(der)) else {
                throw SignedDataVerifierConfigurationError(message: "a receipt root is not a DER certificate")
            }
            roots.append(root)
        }
        guard !roots.isEmpty else { throw SignedDataVerifierConfigurationError(message: "no receipt root certificate") }
        var intermediates: [Certificate] = []
        for der in intermediateCertificates {
            guard let intermediate = try? Certificate(derEncoded: Array(der)) else {
                throw SignedDataVerifierConfigurationError(message: "a receipt intermediate is not a DER certificate")
            }
            intermediates.append(intermediate)
        }
        guard !intermediates.isEmpty else {
            throw SignedDataVerifierConfigurationError(message: "no receipt-signing intermediate certificate")
        }
        self.init(roots: roots, intermediates: intermediates, maximumCertificates: maximumCertificates)
    }

    /// Trusting `roots` through `intermediates` (certificates already parsed).
    package init(roots: [Certificate], intermediates: [Certificate], maximumCertificates: Int = defaultMaximumCertificates) {
        self.roots = roots
        var byDER: [[UInt8]: Certificate] = [:]
        for intermediate in intermediates {
            var serializer = DER.Serializer()
            if (try? serializer.serialize(intermediate)) != nil { byDER[serializer.serializedBytes] = intermediate }
        }
        self.intermediates = byDER
        self.maximumCertificates = max(1, maximumCertificates)
    }

    /// Reads `bytes` as an app receipt and proves Apple signed it.
    /// - Returns: the receipt; or `receipt_malformed` (not a receipt), `receipt_too_many_certificates` or
    ///   `receipt_not_authentic` (not signed by a trusted chain).
    package func verify(_ bytes: [UInt8]) async -> Result<AppReceipt, VerificationFailure> {
        let signed: PKCS7SignedData
        let receipt: AppReceipt
        do {
            signed = try AppReceiptParser.signedData(bytes)
            receipt = try AppReceiptParser.receipt(fromPayload: signed.content)
        } catch {
            return .failure(VerificationFailure(.receiptMalformed, "not an App Store receipt: \(error)"))
        }
        guard let created = receipt.creationDate else {
            return .failure(VerificationFailure(.receiptMalformed, "the receipt has no creation date"))
        }
        guard signed.certificates.count <= maximumCertificates else {
            return .failure(
                VerificationFailure(
                    .receiptTooManyCertificates,
                    "the receipt carries \(signed.certificates.count) certificates; Apple's carry at most \(maximumCertificates)"))
        }
        if let failure = await check(signed, at: created) {
            return .failure(VerificationFailure(.receiptNotAuthentic, failure))
        }
        return .success(receipt)
    }

    /// Why `signed` is not signed by a trusted chain at `time`; `nil` when it is.
    func check(_ signed: PKCS7SignedData, at time: Date) async -> String? {
        guard signed.signers.count == 1, let signer = signed.signers.first else {
            return "a receipt has exactly one signer, this one has \(signed.signers.count)"
        }
        guard !signer.hasSignedAttributes else { return "the signature covers signed attributes, which receipts never use" }
        guard let algorithm = Self.signatureAlgorithm(digest: signer.digestAlgorithm, signature: signer.signatureAlgorithm) else {
            return "unsupported signature algorithm \(signer.signatureAlgorithm) with digest \(signer.digestAlgorithm)"
        }
        let key = ProvenReceiptChains.Key(certificates: signed.certificates, signer: signer)
        let leaf: Certificate
        var proof: ProvenReceiptChains.Proof?
        if let known = proven.proof(for: key) {
            guard known.window.contains(time) else {
                return "the signing certificate does not chain to a trusted root under Apple's receipt policy"
            }
            leaf = known.leaf
        } else {
            let shape: (signing: Certificate, intermediate: Certificate)
            switch reduce(signed.certificates, signer: signer) {
            case .success(let reduced): shape = reduced
            case .failure(let failure): return failure.message
            }
            var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
                AppleChainPolicy()
                RFC5280Policy(validationTime: time)
            }
            let result = await verifier.validate(leaf: shape.signing, intermediates: CertificateStore([shape.intermediate]))
            guard case .validCertificate(let chain) = result else {
                return "the signing certificate does not chain to a trusted root under Apple's receipt policy"
            }
            leaf = shape.signing
            let from = chain.map(\.notValidBefore).max() ?? time
            let until = chain.map(\.notValidAfter).min() ?? time
            proof = ProvenReceiptChains.Proof(leaf: shape.signing, window: from...max(from, until))
        }
        guard leaf.publicKey.isValidSignature(signer.signature, for: signed.content, signatureAlgorithm: algorithm) else {
            return "the signature does not match the receipt's content"
        }
        if let proof { proven.remember(proof, for: key) }
        return nil
    }

    /// The receipt's certificates reduced to the shape Apple signs with: the signer's certificate (by issuer and
    /// serial number; exactly one) and the one configured intermediate among them that issued it. Every other
    /// certificate is ignored, an embedded root included.
    func reduce(_ certificates: [[UInt8]], signer: PKCS7SignerInfo) -> Result<
        (signing: Certificate, intermediate: Certificate), VerificationFailure
    > {
        var signing: Certificate?
        var carried: [Certificate] = []
        for der in certificates {
            if let intermediate = intermediates[der] {
                carried.append(intermediate)
                continue
            }
            guard let certificate = try? Certificate(derEncoded: der) else {
                return .failure(VerificationFailure(.receiptNotAuthentic, "a certificate of the receipt is unreadable"))
            }
            guard certificate.issuer == signer.issuer, certificate.serialNumber == signer.serialNumber else { continue }
            guard signing == nil else {
                return .failure(VerificationFailure(.receiptNotAuthentic, "two certificates of the receipt claim to be the signer's"))
            }
            signing = certificate
        }
        guard let signing else {
            return .failure(VerificationFailure(.receiptNotAuthentic, "the signer's certificate is not in the receipt"))
        }
        let issuers = carried.filter { $0.subject == signing.issuer }
        guard issuers.count == 1, let intermediate = issuers.first else {
            return .failure(
                VerificationFailure(
                    .receiptNotAuthentic,
                    issuers.isEmpty
                        ? "the receipt does not carry a receipt-signing intermediate that issued its signing certificate"
                        : "the receipt carries more than one receipt-signing intermediate for its signing certificate"))
        }
        return .success((signing, intermediate))
    }

    static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let sha384: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 2]
    static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]

    /// The signature algorithm of a signer: Apple names RSA as `rsaEncryption` plus a digest (SHA-1 on older
    /// receipts, SHA-256 since 2023); the combined OIDs are accepted when they agree with the digest.
    static func signatureAlgorithm(
        digest: ASN1ObjectIdentifier, signature: ASN1ObjectIdentifier
    ) -> Certificate.SignatureAlgorithm? {
        let combined: [ASN1ObjectIdentifier: (ASN1ObjectIdentifier, Certificate.SignatureAlgorithm)] = [
            [1, 2, 840, 113549, 1, 1, 5]: (sha1, .sha1WithRSAEncryption),
            [1, 2, 840, 113549, 1, 1, 11]: (sha256, .sha256WithRSAEncryption),
            [1, 2, 840, 113549, 1, 1, 12]: (sha384, .sha384WithRSAEncryption),
            [1, 2, 840, 10045, 4, 3, 2]: (sha256, .ecdsaWithSHA256),
            [1, 2, 840, 10045, 4, 3, 3]: (sha384, .ecdsaWithSHA384),
        ]
        if signature == rsaEncryption {
            switch digest {
            case sha1: return .sha1WithRSAEncryption
            case sha256: return .sha256WithRSAEncryption
            case sha384: return .sha384WithRSAEncryption
            default: return nil
            }
        }
        guard let (expectedDigest, algorithm) = combined[signature], expectedDigest == digest else { return nil }
        return algorithm
    }
}

/// Receipt signing chains proven before, keyed by the SHA-256 of the receipt's certificates and its signer's
/// identity; an entry keeps the signing certificate and the window in which every certificate of the chain is valid.
/// Inserted only after a receipt the chain carried verified. Bounded (64): when full, it starts again.
final class ProvenReceiptChains: Sendable {

    struct Key: Hashable {
        let certificates: ChainCache.Key
        let issuer: DistinguishedName
        let serialNumber: Certificate.SerialNumber

        init(certificates: [[UInt8]], signer: PKCS7SignerInfo) {
            self.certificates = ChainCache.Key(certificates: certificates)
            issuer = signer.issuer
            serialNumber = signer.serialNumber
        }
    }

    struct Proof {
        let leaf: Certificate
        let window: ClosedRange<Date>
    }

    static let capacity = 64
    private let proofs = Mutex<[Key: Proof]>([:])

    func proof(for key: Key) -> Proof? {
        proofs.withLock { $0[key] }
    }

    func remember(_ proof: Proof, for key: Key) {
        proofs.withLock { proofs in
            if proofs.count >= Self.capacity { proofs.removeAll(keepingCapacity: true) }
            proofs[key] = proof
        }
    }
}
