import Core
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
        if !StandardBase64.isValid(receipt) {
            receipt = cleaned(raw.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard !receipt.isEmpty else {
            return .failure(VerificationFailure(.invalidReceipt, "the receipt is empty"))
        }
        guard receipt.utf8.count <= maximumLength else {
            return .failure(VerificationFailure(.invalidReceipt, "the receipt is longer than \(maximumLength) characters"))
        }
        guard StandardBase64.isValid(receipt) else {
            return .failure(VerificationFailure(.invalidReceipt, "the receipt is not base64"))
        }
        return .success(receipt)
    }

    /// `raw` with line breaks and tabs removed and every space made `+`. Done on the UTF-8 bytes (those four
    /// are ASCII, and no byte of a multi-byte character is): building the string scalar by scalar cost the
    /// verifier more than the rest of a receipt job but the call to Apple (`scripts/bench-cpu --perf`).
    package static func cleaned(_ raw: String) -> String {
        let isSpecial = { (byte: UInt8) in
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
        }
        guard raw.utf8.contains(where: isSpecial) else { return raw }
        var cleaned: [UInt8] = []
        cleaned.reserveCapacity(raw.utf8.count)
        for byte in raw.utf8 {
            switch byte {
            case UInt8(ascii: " "): cleaned.append(UInt8(ascii: "+"))
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            default: cleaned.append(byte)
            }
        }
        return String(decoding: cleaned, as: UTF8.self)
    }
}
