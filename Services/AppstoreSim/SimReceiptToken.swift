import AppStore
import Foundation

/// The identity of a receipt the simulator issued: `SIMRCPT1`, an environment byte (`P` or `S`) and 24 random
/// bytes. The app receipts handed out are PKCS#7 (``SimContext/appReceipt(_:in:)``) carrying the token as their
/// opaque value; the bare token, base64, is accepted wherever a receipt is. Decoding tells garbage (Apple's
/// `21002`) from a well-formed receipt the simulator may or may not have issued (`21003` when unknown).
enum SimReceiptToken {
    static let magic = Array("SIMRCPT1".utf8)

    /// A fresh receipt string for `environment`.
    static func make(environment: AppStoreEnvironment) -> String {
        var bytes = magic
        bytes.append(environment == .sandbox ? UInt8(ascii: "S") : UInt8(ascii: "P"))
        for _ in 0..<24 { bytes.append(UInt8.random(in: .min ... .max)) }
        return Data(bytes).base64EncodedString()
    }

    /// The token of a receipt (a PKCS#7 app receipt or a bare token), cleaned as Apple does (whitespace dropped,
    /// spaces back to `+`); `nil` when it is not a well-formed simulator receipt. The PKCS#7 signature is not
    /// checked here (``SimStore/verifyReceipt(body:endpoint:)`` checks it).
    static func normalize(_ raw: String) -> String? {
        read(raw)?.token
    }

    /// A receipt's token and, for a PKCS#7 app receipt, its bytes (whose signature `verifyReceipt` checks).
    static func read(_ raw: String) -> (token: String, signedReceipt: [UInt8]?)? {
        guard let data = Data(base64Encoded: clean(raw)) else { return nil }
        if let token = token(of: data) { return (token, nil) }
        let bytes = Array(data)
        guard let receipt = try? AppReceiptParser.parse(bytes), let opaque = receipt.opaqueValue,
            let token = token(of: Data(opaque))
        else { return nil }
        return (token, bytes)
    }

    /// The token when `data` is one.
    static func token(of data: Data) -> String? {
        guard data.count == magic.count + 25, data.prefix(magic.count).elementsEqual(magic),
            [UInt8(ascii: "S"), UInt8(ascii: "P")].contains(data[data.startIndex + magic.count])
        else {
            return nil
        }
        return data.base64EncodedString()
    }

    /// A receipt string without whitespace, spaces read as `+`.
    static func clean(_ raw: String) -> String { ReceiptData.cleaned(raw) }
}
