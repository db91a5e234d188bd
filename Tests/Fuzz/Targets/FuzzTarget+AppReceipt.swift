import AppStore
import SwiftASN1
import X509

extension FuzzTarget {
    /// AppStore's PKCS#7 app receipt reader (`AppReceiptParser`): what the verifier reads of a receipt before any
    /// signature is checked — the `SignedData` (BER, indefinite lengths), its embedded certificates and signers, the
    /// payload's attributes. Whatever it accepts, `parse` and `signedData` agree on, and the purchases' identifiers
    /// are listed once each. An input starting with a `SET` tag (0x31) is taken as a payload and wrapped in a
    /// `SignedData` here, so the fuzzer reaches the attribute reader without having to find the PKCS#7 layer.
    static let appReceipt = FuzzTarget(
        name: "AppReceipt", maxLength: 65536,
        summary: "AppStore AppReceiptParser: parse and signedData agree; certificates read"
    ) { bytes throws(FuzzFailure) in
        let receiptBytes = bytes.first == 0x31 ? ReceiptEnvelope.wrap(payload: bytes) : bytes
        let signed = try? AppReceiptParser.signedData(receiptBytes)
        for der in signed?.certificates ?? [] { _ = try? Certificate(derEncoded: der) }
        guard let receipt = try? AppReceiptParser.parse(receiptBytes) else { return }
        guard let signed else { throw FuzzFailure("parse read a receipt that signedData refuses") }
        try expect(
            (try? AppReceiptParser.parse(ReceiptEnvelope.wrap(payload: signed.content))) == receipt,
            "the same payload in another envelope reads differently")
        let identifiers = receipt.transactionIdentifiers
        try expect(Set(identifiers).count == identifiers.count, "an identifier is listed twice")
        for purchase in receipt.purchases {
            if let id = purchase.transactionId, !id.isEmpty {
                try expect(identifiers.contains(id), "transaction \(id.prefix(40)) is not listed")
            }
        }
        _ = receipt.environment
    }
}

/// A receipt payload in a minimal PKCS#7 `SignedData`: no digest algorithms, certificates or signers.
enum ReceiptEnvelope {
    static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    static let data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let explicitZero = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    static func wrap(payload: [UInt8]) -> [UInt8] {
        var serializer = DER.Serializer()
        do {
            try serializer.appendConstructedNode(identifier: .sequence) { contentInfo in
                try contentInfo.serialize(signedData)
                try contentInfo.appendConstructedNode(identifier: explicitZero) { explicit in
                    try explicit.appendConstructedNode(identifier: .sequence) { signed in
                        try signed.serialize(1)
                        signed.appendConstructedNode(identifier: .set) { _ in }
                        try signed.appendConstructedNode(identifier: .sequence) { encapsulated in
                            try encapsulated.serialize(data)
                            try encapsulated.appendConstructedNode(identifier: explicitZero) { content in
                                try content.serialize(ASN1OctetString(contentBytes: payload[...]))
                            }
                        }
                        signed.appendConstructedNode(identifier: .set) { _ in }
                    }
                }
            }
        } catch {
            return []
        }
        return serializer.serializedBytes
    }
}
