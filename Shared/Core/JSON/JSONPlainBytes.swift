/// Runs of string bytes JSON carries as they are: no quote, no backslash, no control character. The reader and the
/// writer test eight bytes at a time, since Apple's payloads carry nested JWS kilobytes long inside strings.
enum JSONPlainBytes {
    static let lowBits: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether any of the word's eight bytes is a quote, a backslash or below 0x20. Exact, neither a false positive
    /// nor a false negative: the classic "has a zero byte" and "has a byte less than n" tests (n ≤ 128).
    @inline(__always)
    static func mayEndRun(_ word: UInt64) -> Bool {
        let quote = word ^ (lowBits &* 0x22)
        let backslash = word ^ (lowBits &* 0x5C)
        let zeroQuote = (quote &- lowBits) & ~quote
        let zeroBackslash = (backslash &- lowBits) & ~backslash
        let control = (word &- lowBits &* 0x20) & ~word
        return (zeroQuote | zeroBackslash | control) & highBits != 0
    }

    /// Whether every byte can be written inside a JSON string as it is.
    static func arePlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var index = 0
        while index + 8 <= bytes.count {
            if mayEndRun(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) { return false }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            index += 1
        }
        return true
    }
}
