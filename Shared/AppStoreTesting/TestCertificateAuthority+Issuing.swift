import AppStore
@preconcurrency package import Crypto
package import Foundation
import SwiftASN1
package import X509

extension TestCertificateAuthority {
    /// How an authority's certificates are made; change fields to build broken variants.
    package struct Options: Sendable {
        package var namePrefix = "Tollgate Test"
        package var rootValidity: ClosedRange<Date>
        package var intermediateValidity: ClosedRange<Date>
        package var leafValidity: ClosedRange<Date>
        /// Put the Apple WWDR OID on the intermediate.
        package var intermediateHasAppleOID = true
        /// Put the receipt-signing OID on the leaf.
        package var leafHasAppleOID = true
        /// An OCSP responder URL written into the leaf's Authority Information Access, as Apple's
        /// certificates carry one; `nil` leaves it out.
        package var ocspResponderURL: String?

        /// Root and intermediate valid 2015–2045; leaf valid from a year before `now` to two years after.
        package init(now: Date = Date()) {
            let year: TimeInterval = 365 * 24 * 3600
            rootValidity = Date(timeIntervalSince1970: 1_420_070_400)...Date(timeIntervalSince1970: 2_366_841_600)
            intermediateValidity = rootValidity
            leafValidity = now.addingTimeInterval(-year)...now.addingTimeInterval(2 * year)
        }
    }

    static func issueIntermediate(
        key: P384.Signing.PrivateKey, options: Options, rootKey: P384.Signing.PrivateKey, root: Certificate
    ) throws -> Certificate {
        let publicKey = Certificate.PublicKey(key.publicKey)
        let rootKeyID = try root.extensions.subjectKeyIdentifier?.keyIdentifier
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: options.intermediateValidity.lowerBound,
            notValidAfter: options.intermediateValidity.upperBound,
            issuer: root.subject, subject: try name(options.namePrefix + " Developer Relations CA"),
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: rootKeyID)
                if options.intermediateHasAppleOID {
                    Certificate.Extension(oid: AppleChainPolicy.intermediateOID, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
    }

    static func issueLeaf(
        key: P256.Signing.PrivateKey, options: Options, issuerKey: P384.Signing.PrivateKey, issuer: Certificate
    ) throws -> Certificate {
        let publicKey = Certificate.PublicKey(key.publicKey)
        let issuerKeyID = try issuer.extensions.subjectKeyIdentifier?.keyIdentifier
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: options.leafValidity.lowerBound, notValidAfter: options.leafValidity.upperBound,
            issuer: issuer.subject, subject: try name(options.namePrefix + " App Store Receipt Signing"),
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: issuerKeyID)
                if options.leafHasAppleOID {
                    Certificate.Extension(oid: AppleChainPolicy.leafOID, critical: false, value: [0x05, 0x00])
                }
                if let url = options.ocspResponderURL {
                    AuthorityInformationAccess([.init(method: .ocspServer, location: .uniformResourceIdentifier(url))])
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(issuerKey)
        )
    }

    /// A self-signed P-256 certificate with the Apple leaf OID and Apple-like name: the classic forgery
    /// when presented as x5c[0].
    package static func selfSignedLeaf(
        key: P256.Signing.PrivateKey, validity: ClosedRange<Date>
    ) throws -> Certificate {
        let publicKey = Certificate.PublicKey(key.publicKey)
        let subject = try name("Prod ECC Mac App Store and iTunes Store Receipt Signing")
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: publicKey)
                Certificate.Extension(oid: AppleChainPolicy.leafOID, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
    }
}
