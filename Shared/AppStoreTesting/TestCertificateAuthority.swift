import AppStore
@preconcurrency package import Crypto
package import Foundation
import SwiftASN1
package import X509

/// A private certificate authority shaped like Apple's App Store signing chain, for tests and the App
/// Store simulator: a self-signed P-384 root, a P-384 intermediate carrying the Apple WWDR OID
/// (1.2.840.113635.100.6.2.1) and a P-256 leaf carrying the receipt-signing OID
/// (1.2.840.113635.100.6.11.1), with key usage, SKI and AKI. A verifier that trusts `rootDER` accepts
/// what `signer()` signs. Never trusted in production: it is not Apple.
package struct TestCertificateAuthority: Sendable {
    package let rootKey: P384.Signing.PrivateKey
    package let root: Certificate
    package let intermediateKey: P384.Signing.PrivateKey
    package let intermediate: Certificate
    package let leafKey: P256.Signing.PrivateKey
    package let leaf: Certificate

    /// Generates a fresh authority.
    package init(options: Options = Options()) throws {
        let rootKey = P384.Signing.PrivateKey()
        let rootName = try Self.name(options.namePrefix + " Root CA")
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(rootKey.publicKey),
            notValidBefore: options.rootValidity.lowerBound, notValidAfter: options.rootValidity.upperBound,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: Certificate.PublicKey(rootKey.publicKey))
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
        let intermediateKey = P384.Signing.PrivateKey()
        let intermediate = try Self.issueIntermediate(
            key: intermediateKey, options: options, rootKey: rootKey, root: root
        )
        try self.init(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey, intermediate: intermediate,
            leafKey: P256.Signing.PrivateKey(), leaf: nil, options: options
        )
    }

    /// An authority from existing material; with `leaf: nil` a new leaf is issued for `leafKey`.
    package init(
        rootKey: P384.Signing.PrivateKey, root: Certificate,
        intermediateKey: P384.Signing.PrivateKey, intermediate: Certificate,
        leafKey: P256.Signing.PrivateKey, leaf: Certificate?, options: Options = Options()
    ) throws {
        self.rootKey = rootKey
        self.root = root
        self.intermediateKey = intermediateKey
        self.intermediate = intermediate
        self.leafKey = leafKey
        if let leaf {
            self.leaf = leaf
        } else {
            self.leaf = try Self.issueLeaf(key: leafKey, options: options, issuerKey: intermediateKey, issuer: intermediate)
        }
    }

    /// The same root and intermediate with a new leaf made with `options` (for example an expired leaf,
    /// or one without the Apple OID).
    package func withNewLeaf(options: Options) throws -> TestCertificateAuthority {
        try TestCertificateAuthority(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey, intermediate: intermediate,
            leafKey: P256.Signing.PrivateKey(), leaf: nil, options: options
        )
    }

    /// The same root with a new intermediate (and leaf) made with `options`.
    package func withNewIntermediate(options: Options) throws -> TestCertificateAuthority {
        let key = P384.Signing.PrivateKey()
        let intermediate = try Self.issueIntermediate(key: key, options: options, rootKey: rootKey, root: root)
        return try TestCertificateAuthority(
            rootKey: rootKey, root: root, intermediateKey: key, intermediate: intermediate,
            leafKey: P256.Signing.PrivateKey(), leaf: nil, options: options
        )
    }

    /// The root certificate in DER: what a verifier should trust.
    package var rootDER: Data { Self.der(root) }
    package var intermediateDER: Data { Self.der(intermediate) }
    package var leafDER: Data { Self.der(leaf) }

    /// A signer with this authority's leaf key and the chain [leaf, intermediate, root] in `x5c`.
    package func signer() -> JWSSigner {
        JWSSigner(key: leafKey, x5cDER: [leafDER, intermediateDER, rootDER])
    }

    /// A certificate's DER bytes.
    package static func derEncoded(_ certificate: Certificate) -> Data { der(certificate) }

    static func der(_ certificate: Certificate) -> Data {
        var serializer = DER.Serializer()
        // Serializing a certificate this process built or parsed cannot fail.
        try? serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }

    static func name(_ commonName: String) throws -> DistinguishedName {
        try DistinguishedName {
            CommonName(commonName)
            OrganizationalUnitName("Tollgate Test Certification Authority")
            OrganizationName("Tollgate")
            CountryName("US")
        }
    }
}
