import Foundation
import SwiftASN1

/// Reads an App Store receipt: PKCS#7 `SignedData` (BER, as Apple and Xcode write it, indefinite lengths
/// included) whose content is a `SET` of `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER,
/// value OCTET STRING }`.
///
/// Reading is not trusting: the result says what the bytes claim. Only ``ReceiptSignatureVerifier`` says that
/// Apple signed them. Unknown attributes are skipped; attributes of the wrong type are an error (a receipt Apple
/// made never has them).
package enum AppReceiptParser {
    /// `id-signedData`.
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    /// `id-data`.
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]

    /// Parses a receipt's DER/BER bytes.
    /// - Throws: ``AppReceiptParseError`` when the bytes are not a PKCS#7 receipt.
    package static func parse(_ bytes: [UInt8]) throws(AppReceiptParseError) -> AppReceipt {
        let content: [UInt8]
        do {
            content = try signedData(bytes).content
        } catch let error as AppReceiptParseError {
            throw error
        } catch {
            throw AppReceiptParseError("not a PKCS#7 signed receipt: \(error)")
        }
        do {
            return try receipt(fromPayload: content)
        } catch let error as AppReceiptParseError {
            throw error
        } catch {
            throw AppReceiptParseError("the receipt's payload is not a set of receipt attributes: \(error)")
        }
    }

    /// The parts of a PKCS#7 `SignedData` a receipt needs: the encapsulated content (the receipt payload), the
    /// certificates and the signers.
    package static func signedData(_ bytes: [UInt8]) throws -> PKCS7SignedData {
        let root = try BER.parse(bytes)
        return try BER.sequence(root, identifier: .sequence) { nodes in
            let type = try ASN1ObjectIdentifier(berEncoded: &nodes)
            guard type == signedDataOID else { throw AppReceiptParseError("the content type is \(type), not signedData") }
            let signed = try BER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { signedData in
                try BER.sequence(signedData, identifier: .sequence) { fields in
                    _ = try Int(berEncoded: &fields)  // version
                    guard fields.next() != nil else { throw AppReceiptParseError("no digest algorithms") }
                    guard let encapsulated = fields.next() else { throw AppReceiptParseError("no encapsulated content") }
                    let content = try encapsulatedContent(encapsulated)
                    var certificates: [[UInt8]] = []
                    var signers: [PKCS7SignerInfo] = []
                    while let node = fields.next() {
                        if node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                            guard case .constructed(let children) = node.content else {
                                throw AppReceiptParseError("the certificates are not a set")
                            }
                            certificates = children.map { Array($0.encodedBytes) }
                        } else if node.identifier == .set {
                            signers = try BER.set(node, identifier: .set) { infos in
                                var result: [PKCS7SignerInfo] = []
                                while let info = infos.next() { result.append(try PKCS7SignerInfo(berEncoded: info)) }
                                return result
                            }
                        }
                    }
                    return PKCS7SignedData(content: content, certificates: certificates, signers: signers)
                }
            }
            while nodes.next() != nil {}
            return signed
        }
    }

    static func encapsulatedContent(_ node: ASN1Node) throws -> [UInt8] {
        try BER.sequence(node, identifier: .sequence) { info in
            let contentType = try ASN1ObjectIdentifier(berEncoded: &info)
            guard contentType == dataOID else {
                throw AppReceiptParseError("the encapsulated content type is \(contentType), not data")
            }
            guard
                let octets = try BER.optionalExplicitlyTagged(
                    &info, tagNumber: 0, tagClass: .contextSpecific,
                    { node in
                        try ASN1OctetString(berEncoded: node)
                    })
            else { throw AppReceiptParseError("the receipt has no content (a detached signature)") }
            return Array(octets.bytes)
        }
    }

    /// The receipt attributes of a payload.
    static func receipt(fromPayload payload: [UInt8]) throws -> AppReceipt {
        var receipt = AppReceipt()
        try attributes(payload) { type, value in
            switch type {
            case AppReceiptField.receiptType: receipt.receiptType = try string(value)
            case AppReceiptField.bundleId: receipt.bundleId = try string(value)
            case AppReceiptField.applicationVersion: receipt.applicationVersion = try string(value)
            case AppReceiptField.opaqueValue: receipt.opaqueValue = value
            case AppReceiptField.creationDate: receipt.creationDate = try date(value)
            case AppReceiptField.inAppPurchase: receipt.purchases.append(try purchase(value))
            default: break
            }
        }
        return receipt
    }

    static func purchase(_ payload: [UInt8]) throws -> AppReceiptPurchase {
        var purchase = AppReceiptPurchase()
        try attributes(payload) { type, value in
            switch type {
            case AppReceiptField.quantity: purchase.quantity = try integer(value)
            case AppReceiptField.productId: purchase.productId = try string(value)
            case AppReceiptField.transactionId: purchase.transactionId = try string(value)
            case AppReceiptField.originalTransactionId: purchase.originalTransactionId = try string(value)
            case AppReceiptField.purchaseDate: purchase.purchaseDate = try date(value)
            case AppReceiptField.expiresDate: purchase.expiresDate = try date(value)
            default: break
            }
        }
        return purchase
    }

    /// Calls `body` with each attribute's type and value bytes.
    static func attributes(_ payload: [UInt8], _ body: (Int, [UInt8]) throws -> Void) throws {
        let set = try BER.parse(payload)
        try BER.sequence(set, identifier: .set) { nodes in
            while let node = nodes.next() {
                try BER.sequence(node, identifier: .sequence) { fields in
                    let type = try Int(berEncoded: &fields)
                    _ = try Int(berEncoded: &fields)  // the attribute's version
                    let value = try ASN1OctetString(berEncoded: &fields)
                    while fields.next() != nil {}
                    try body(type, Array(value.bytes))
                }
            }
        }
    }

    /// A UTF8String, IA5String or PrintableString inside an attribute's value.
    static func string(_ value: [UInt8]) throws -> String {
        let node = try BER.parse(value)
        switch node.identifier {
        case .utf8String: return String(try ASN1UTF8String(berEncoded: node))
        case .ia5String: return String(try ASN1IA5String(berEncoded: node))
        case .printableString: return String(try ASN1PrintableString(berEncoded: node))
        default: throw AppReceiptParseError("an attribute that should hold text holds \(node.identifier)")
        }
    }

    static func integer(_ value: [UInt8]) throws -> Int {
        try Int(berEncoded: try BER.parse(value))
    }

    /// An RFC 3339 date (`2023-11-14T14:29:02Z`) inside an attribute's value; an empty string is no date.
    static func date(_ value: [UInt8]) throws -> Date? {
        let text = try string(value)
        if text.isEmpty { return nil }
        guard let date = try? Date(text, strategy: .iso8601) else {
            throw AppReceiptParseError("'\(text.prefix(40))' is not an RFC 3339 date")
        }
        return date
    }
}

/// Why bytes are not an App Store receipt.
package struct AppReceiptParseError: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
