package import SwiftASN1
package import X509

/// A PKCS#7 `SignedData` as a receipt uses it: attached content, certificates, signers.
package struct PKCS7SignedData: Sendable {
    /// The encapsulated content: for a receipt, its payload.
    package var content: [UInt8]
    /// Each certificate's DER.
    package var certificates: [[UInt8]]
    package var signers: [PKCS7SignerInfo]
}

/// One `SignerInfo` (RFC 5652 §5.3), identified by issuer and serial number.
package struct PKCS7SignerInfo: Sendable {
    package var issuer: DistinguishedName
    package var serialNumber: Certificate.SerialNumber
    package var digestAlgorithm: ASN1ObjectIdentifier
    package var signatureAlgorithm: ASN1ObjectIdentifier
    package var signature: [UInt8]
    /// Whether the signature covers signed attributes rather than the content (receipts never do).
    package var hasSignedAttributes: Bool

    init(berEncoded node: ASN1Node) throws {
        (issuer, serialNumber, digestAlgorithm, signatureAlgorithm, signature, hasSignedAttributes) = try BER.sequence(
            node, identifier: .sequence
        ) { fields in
            _ = try Int(berEncoded: &fields)  // version
            guard let identifier = fields.next() else { throw AppReceiptParseError("a signer has no identifier") }
            let (issuer, serial) = try BER.sequence(identifier, identifier: .sequence) { sid in
                guard let name = sid.next() else { throw AppReceiptParseError("a signer has no issuer") }
                let issuer = try DistinguishedName(derEncoded: Array(name.encodedBytes))
                let serial = try ArraySlice<UInt8>(berEncoded: &sid)
                return (issuer, Certificate.SerialNumber(bytes: serial))
            }
            let digest = try Self.algorithm(&fields)
            var signedAttributes = false
            var lookahead = fields
            if let next = lookahead.next(), next.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                fields = lookahead
                signedAttributes = true
            }
            let signatureAlgorithm = try Self.algorithm(&fields)
            let signature = try ASN1OctetString(berEncoded: &fields)
            while fields.next() != nil {}
            return (issuer, serial, digest, signatureAlgorithm, Array(signature.bytes), signedAttributes)
        }
    }

    /// An `AlgorithmIdentifier`'s OID (parameters are skipped).
    static func algorithm(_ nodes: inout ASN1NodeCollection.Iterator) throws -> ASN1ObjectIdentifier {
        guard let node = nodes.next() else { throw AppReceiptParseError("a signer lacks an algorithm") }
        return try BER.sequence(node, identifier: .sequence) { parts in
            let oid = try ASN1ObjectIdentifier(berEncoded: &parts)
            while parts.next() != nil {}
            return oid
        }
    }
}
