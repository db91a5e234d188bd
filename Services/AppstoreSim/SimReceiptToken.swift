import AppStore
import Foundation

/// The opaque base64 receipts the simulator issues: `SIMRCPT1`, an environment byte (`P` or `S`) and 24
/// random bytes. Decoding tells garbage (Apple's `21002`) from a well-formed receipt the simulator may or
/// may not have issued (`21003` when unknown).
enum SimReceiptToken {
    static let magic = Array("SIMRCPT1".utf8)

    /// A fresh receipt string for `environment`.
    static func make(environment: AppStoreEnvironment) -> String {
        var bytes = magic
        bytes.append(environment == .sandbox ? UInt8(ascii: "S") : UInt8(ascii: "P"))
        for _ in 0..<24 { bytes.append(UInt8.random(in: .min ... .max)) }
        return Data(bytes).base64EncodedString()
    }

    /// Cleans a receipt as Apple does (whitespace dropped, spaces back to `+`); `nil` when it is not a
    /// well-formed simulator receipt.
    static func normalize(_ raw: String) -> String? {
        var cleaned = ""
        cleaned.reserveCapacity(raw.utf8.count)
        for character in raw.unicodeScalars {
            switch character {
            case " ": cleaned.append("+")
            case "\n", "\r", "\t": continue
            default: cleaned.unicodeScalars.append(character)
            }
        }
        guard let data = Data(base64Encoded: cleaned), data.count == magic.count + 25,
            data.prefix(magic.count).elementsEqual(magic),
            [UInt8(ascii: "S"), UInt8(ascii: "P")].contains(data[data.startIndex + magic.count])
        else {
            return nil
        }
        return data.base64EncodedString()
    }
}
