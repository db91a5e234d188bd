import Foundation

/// Cleans up a base64 receipt as apps and form encodings deliver it: line breaks and tabs are removed and spaces
/// that were once `+` (URL form decoding) are turned back into `+` — including at either end, where a receipt
/// starting or ending with `+` has them. Only when that reading is not base64 are spaces at the ends taken as
/// stray and dropped.
package enum ReceiptData {
    /// The cleaned receipt, or a failure with code `invalid_receipt` when it is empty, too long or not
    /// standard base64.
    package static func sanitize(_ raw: String, maximumLength: Int) -> Result<String, VerificationFailure> {
        var receipt = cleaned(raw)
        if !isStandardBase64(receipt) {
            receipt = cleaned(raw.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard !receipt.isEmpty else {
            return .failure(VerificationFailure(.invalidReceipt, "the receipt is empty"))
        }
        guard receipt.utf8.count <= maximumLength else {
            return .failure(VerificationFailure(.invalidReceipt, "the receipt is longer than \(maximumLength) characters"))
        }
        guard isStandardBase64(receipt) else {
            return .failure(VerificationFailure(.invalidReceipt, "the receipt is not base64"))
        }
        return .success(receipt)
    }

    /// `raw` with line breaks and tabs removed and every space made `+`.
    private static func cleaned(_ raw: String) -> String {
        var cleaned = String.UnicodeScalarView()
        cleaned.reserveCapacity(raw.unicodeScalars.count)
        for scalar in raw.unicodeScalars {
            switch scalar {
            case " ": cleaned.append("+")
            case "\n", "\r", "\t": continue
            default: cleaned.append(scalar)
            }
        }
        return String(cleaned)
    }

    /// Standard alphabet, `=` padding only at the end, length a multiple of four.
    static func isStandardBase64(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count % 4 == 0 else { return false }
        var padding = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "="):
                padding += 1
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                if padding > 0 { return false }
            default:
                return false
            }
        }
        return padding <= 2
    }
}
