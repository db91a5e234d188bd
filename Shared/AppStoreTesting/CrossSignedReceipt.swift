package import AppStore
@preconcurrency import Crypto
import Foundation
import SwiftASN1
@_spi(CMS) import X509

/// The receipt certificate bomb: an app receipt whose embedded certificates cross-sign each other. With `keys` keys
/// K₀…Kₖ₋₁ there is, for every pair i ≠ j, a CA certificate for Kᵢ signed by Kⱼ, all with one subject; the signer's
/// certificate names that subject as its issuer and is signed by K₀. None of them leads to a trusted root, but a
/// depth-first path search that takes every embedded certificate as a candidate intermediate tries every ordering
/// before it gives up: about ten times the work per key. Tests and the abuse run send it; nothing trusts it.
package enum CrossSignedReceipt {
    /// The receipt's DER: `receipt` signed by a leaf issued under the cross-signed set, which travels with it.
    package static func make(keys: Int, receipt: AppReceipt) throws -> [UInt8] {
        let validity = Date(timeIntervalSince1970: 1_420_070_400)...Date(timeIntervalSince1970: 2_366_841_600)
        let subject = try DistinguishedName {
            CommonName("Apple Worldwide Developer Relations Certification Authority")
            OrganizationName("Apple Inc.")
            CountryName("US")
        }
        let signingKeys = (0..<max(1, keys)).map { _ in P256.Signing.PrivateKey() }
        var certificates: [Certificate] = []
        for (i, subjectKey) in signingKeys.enumerated() {
            for (j, issuerKey) in signingKeys.enumerated() where i != j {
                certificates.append(
                    try Certificate(
                        version: .v3, serialNumber: Certificate.SerialNumber(),
                        publicKey: Certificate.PublicKey(subjectKey.publicKey),
                        notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
                        issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
                        extensions: try Certificate.Extensions {
                            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                            Certificate.Extension(oid: AppleChainPolicy.intermediateOID, critical: false, value: [0x05, 0x00])
                        },
                        issuerPrivateKey: Certificate.PrivateKey(issuerKey)))
            }
        }
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(leafKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, issuer: subject,
            subject: try DistinguishedName { CommonName("Mac App Store and iTunes Store Receipt Signing") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(oid: AppleChainPolicy.leafOID, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: Certificate.PrivateKey(signingKeys[0]))
        return try AppReceiptSigner(key: leafKey, certificate: leaf, intermediates: certificates).sign(receipt)
    }
}
