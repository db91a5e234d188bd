package import AppStore
@preconcurrency package import Crypto
import Foundation
import SwiftASN1
@_spi(CMS) package import X509

/// Writes App Store receipts the way the App Store does: the receipt attributes as a DER `SET`, wrapped in
/// PKCS#7 `SignedData` with the content attached, signed (no signed attributes) by a leaf whose chain
/// (leaf and intermediate) travels in the receipt. The App Store simulator issues its receipts with this; tests
/// sign forged and tampered ones with it.
package struct AppReceiptSigner: Sendable {
    package let key: P256.Signing.PrivateKey
    package let certificate: Certificate
    package let intermediates: [Certificate]

    package init(key: P256.Signing.PrivateKey, certificate: Certificate, intermediates: [Certificate]) {
        self.key = key
        self.certificate = certificate
        self.intermediates = intermediates
    }

    /// The signed receipt's bytes (DER).
    package func sign(_ receipt: AppReceipt) throws -> [UInt8] {
        try sign(payload: Self.payload(receipt))
    }

    /// Signs any payload bytes as a receipt's content (tests use this for payloads Apple never writes).
    package func sign(payload: [UInt8]) throws -> [UInt8] {
        try CMS.sign(
            payload, signatureAlgorithm: .ecdsaWithSHA256, additionalIntermediateCertificates: intermediates,
            certificate: certificate, privateKey: Certificate.PrivateKey(key), detached: false)
    }

    /// The receipt payload: a `SET` of `SEQUENCE { type, version 1, OCTET STRING value }`.
    package static func payload(_ receipt: AppReceipt) throws -> [UInt8] {
        var attributes: [(Int, [UInt8])] = []
        if let type = receipt.receiptType { attributes.append((AppReceiptField.receiptType, try utf8(type))) }
        if let bundleId = receipt.bundleId { attributes.append((AppReceiptField.bundleId, try utf8(bundleId))) }
        if let version = receipt.applicationVersion {
            attributes.append((AppReceiptField.applicationVersion, try utf8(version)))
        }
        if let opaque = receipt.opaqueValue { attributes.append((AppReceiptField.opaqueValue, opaque)) }
        if let created = receipt.creationDate { attributes.append((AppReceiptField.creationDate, try date(created))) }
        for purchase in receipt.purchases {
            attributes.append((AppReceiptField.inAppPurchase, try set(purchaseAttributes(purchase))))
        }
        return try set(attributes)
    }

    static func purchaseAttributes(_ purchase: AppReceiptPurchase) throws -> [(Int, [UInt8])] {
        var attributes: [(Int, [UInt8])] = []
        if let quantity = purchase.quantity { attributes.append((AppReceiptField.quantity, try integer(quantity))) }
        if let product = purchase.productId { attributes.append((AppReceiptField.productId, try utf8(product))) }
        if let id = purchase.transactionId { attributes.append((AppReceiptField.transactionId, try utf8(id))) }
        if let original = purchase.originalTransactionId {
            attributes.append((AppReceiptField.originalTransactionId, try utf8(original)))
        }
        if let date = purchase.purchaseDate { attributes.append((AppReceiptField.purchaseDate, try Self.date(date))) }
        if let date = purchase.expiresDate { attributes.append((AppReceiptField.expiresDate, try Self.date(date))) }
        return attributes
    }

    static func set(_ attributes: [(Int, [UInt8])]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .set) { set in
            for (type, value) in attributes {
                try set.appendConstructedNode(identifier: .sequence) { attribute in
                    try attribute.serialize(type)
                    try attribute.serialize(1)
                    try attribute.serialize(ASN1OctetString(contentBytes: value[...]))
                }
            }
        }
        return serializer.serializedBytes
    }

    static func utf8(_ text: String) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1UTF8String(text))
        return serializer.serializedBytes
    }

    static func integer(_ value: Int) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(value)
        return serializer.serializedBytes
    }

    /// Apple's receipt dates: IA5String, RFC 3339 in UTC to the second.
    static func date(_ date: Date) throws -> [UInt8] {
        let text = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
            .formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0) ?? .gmt))
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1IA5String(text))
        return serializer.serializedBytes
    }
}

extension TestCertificateAuthority {
    /// Signs app receipts with this authority's leaf, the intermediate travelling with it.
    package func receiptSigner() -> AppReceiptSigner {
        AppReceiptSigner(key: leafKey, certificate: leaf, intermediates: [intermediate])
    }
}
