import SwiftASN1

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
