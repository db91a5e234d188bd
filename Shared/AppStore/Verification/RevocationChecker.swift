import Foundation
@_spi(DisableValidityCheck) import X509

/// Online revocation checking of an already proven chain with swift-certificates'
/// `OCSPVerifierPolicy` in hard-failure mode, at the current time. A verified "revoked" answer is
/// permanent (`certificate_revoked`); anything else that prevents a good answer — network, responder
/// errors, unverifiable responses — is `retryable_ocsp`.
struct RevocationChecker: Sendable {
    let roots: [Certificate]
    let requester: any OCSPRequester

    func check(leaf: Certificate, intermediate: Certificate) async -> VerificationResult<Void> {
        // The chain policies again: they handle the certificates' critical extensions, without which the
        // verifier would refuse the leaf before asking OCSP.
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            AppleChainPolicy()
            RFC5280Policy.withValidityCheckDisabled()
            OCSPVerifierPolicy(failureMode: .hard, requester: AnyOCSPRequester(base: requester))
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        switch result {
        case .validCertificate:
            return .verified(())
        case .couldNotValidate(let failures):
            let reasons = failures.map { String(describing: $0.policyFailureReason) }
            if reasons.contains(where: { $0.contains("revoked") }) {
                return .rejected(.init(.certificateRevoked, reasons.first { $0.contains("revoked") } ?? "revoked"))
            }
            return .retryable(.init(.retryableOCSP, reasons.first ?? "OCSP status unknown"))
        }
    }
}

/// Lets a policy use any requester (the policy is generic over a concrete type).
struct AnyOCSPRequester: OCSPRequester {
    let base: any OCSPRequester

    func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        await base.query(request: request, uri: uri)
    }
}
