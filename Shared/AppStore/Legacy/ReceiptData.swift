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

    /// Standard alphabet, `=` padding only at the end, length a multiple of four. One pass over the contiguous UTF-8
    /// with a table (iterating `String.UTF8View` byte by byte was 3 % of the verifier's CPU per receipt).
    static func isStandardBase64(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count % 4 == 0 else { return false }
            var padding = 0
            for byte in bytes {
                if byte == UInt8(ascii: "=") {
                    padding += 1
                } else if !base64Alphabet[Int(byte)] || padding > 0 {
                    return false
                }
            }
            return padding <= 2
        }
    }

    /// `base64Alphabet[byte]`: the byte is in the standard alphabet (not counting `=`).
    private static let base64Alphabet: [Bool] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }
}
