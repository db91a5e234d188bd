import AppStore
@preconcurrency import Crypto
package import Foundation
import SwiftASN1
import X509

/// Broken chains a stranger can build around a genuine one (Apple's, or a test authority's): what the notification
/// door must refuse cheaply. Each call makes new certificates and keys, so no two are the same chain.
package enum ChainForgery {
    /// The genuine intermediate and root of `x5c` around a new leaf that names the intermediate as its issuer but is
    /// signed by a P-384 key of its own (the intermediate's signature is what fails). The leaf's own key signs the JWS,
    /// so the JWS signature itself verifies under the leaf.
    package static func brokenLeaf(x5c: [Data]) throws -> JWSSigner {
        guard x5c.count == 3 else { throw ForgeryError("x5c must hold leaf, intermediate and root") }
        let intermediate = try Certificate(derEncoded: Array(x5c[1]))
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try TestCertificateAuthority.issueLeaf(
            key: leafKey, options: TestCertificateAuthority.Options(), issuerKey: P384.Signing.PrivateKey(), issuer: intermediate)
        return JWSSigner(key: leafKey, x5cDER: [TestCertificateAuthority.der(leaf), x5c[1], x5c[2]])
    }

    /// The genuine root of `x5c` under an impostor intermediate that bears the genuine intermediate's name, Apple's
    /// WWDR OID and the root as its issuer, but is signed by a key of its own; its leaf is really signed by it.
    package static func impostorIntermediate(x5c: [Data]) throws -> JWSSigner {
        guard x5c.count == 3 else { throw ForgeryError("x5c must hold leaf, intermediate and root") }
        let (key, impostor) = try impostor(
            of: try Certificate(derEncoded: Array(x5c[1])), root: try Certificate(derEncoded: Array(x5c[2])))
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try TestCertificateAuthority.issueLeaf(
            key: leafKey, options: TestCertificateAuthority.Options(), issuerKey: key, issuer: impostor)
        return JWSSigner(key: leafKey, x5cDER: [TestCertificateAuthority.der(leaf), TestCertificateAuthority.der(impostor), x5c[2]])
    }

    /// A new impostor of `genuine` (its name and OID, `root` as its issuer, signed by another key) and its key.
    static func impostor(of genuine: Certificate, root: Certificate) throws -> (P384.Signing.PrivateKey, Certificate) {
        let key = P384.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let impostor = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: genuine.notValidBefore, notValidAfter: genuine.notValidAfter,
            issuer: root.subject, subject: genuine.subject, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
                Certificate.Extension(oid: AppleChainPolicy.intermediateOID, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: Certificate.PrivateKey(P384.Signing.PrivateKey()))
        return (key, impostor)
    }

    package struct ForgeryError: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }
}

extension TestCertificateAuthority {
    /// ``ChainForgery/brokenLeaf(x5c:)`` around this authority's chain.
    package func brokenLeafSigner() throws -> JWSSigner {
        try ChainForgery.brokenLeaf(x5c: [leafDER, intermediateDER, rootDER])
    }

    /// An authority whose intermediate is an impostor of this one's (``ChainForgery/impostorIntermediate(x5c:)``):
    /// the same root, so its leaves (really signed by the impostor) can be issued again and again under one impostor.
    package func impostorIntermediate() throws -> TestCertificateAuthority {
        let (key, impostor) = try ChainForgery.impostor(of: intermediate, root: root)
        return try TestCertificateAuthority(
            rootKey: rootKey, root: root, intermediateKey: key, intermediate: impostor, leafKey: P256.Signing.PrivateKey(),
            leaf: nil)
    }
}
