/// Base64url without padding (RFC 4648 §5) decoded six bits at a time, the slow obvious way.
struct ReferenceBase64URL {
    /// The bytes; nil for a byte outside the alphabet or a length of 4k+1.
    var decoded: [UInt8]?
    /// Whether the last character's unused low bits are zero.
    var isCanonical = true
    /// The input with those bits cleared.
    var canonical: [UInt8] = []

    init(_ text: [UInt8]) {
        guard text.count % 4 != 1 else { return }
        let values = text.map(Self.value)
        guard values.allSatisfy({ $0 != nil }) else { return }
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for case let value? in values {
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        decoded = output
        canonical = text
        if bits > 0, let last = values.last, let value = last {
            let unused = UInt8((1 << bits) - 1)
            isCanonical = value & unused == 0
            canonical[canonical.count - 1] = Self.alphabet[Int(value & ~unused)]
        }
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
