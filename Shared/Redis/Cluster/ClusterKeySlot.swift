/// Redis Cluster's key → slot function: CRC16 (XMODEM: polynomial 0x1021, initial value 0) of the key, or of
/// its hash tag (the text between the first `{` and the next `}`, when not empty), modulo 16384.
package enum ClusterKeySlot {
    package static let count = 16_384

    /// The slot of `key`.
    package static func slot(_ key: some Collection<UInt8>) -> Int {
        Int(crc16(hashed(Array(key))) & 0x3FFF)
    }

    /// The slot of a UTF-8 key.
    package static func slot(_ key: String) -> Int {
        slot(Array(key.utf8))
    }

    /// CRC16/XMODEM; `crc16("123456789") == 0x31C3`.
    package static func crc16(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    /// The part of `key` that is hashed: the hash tag if there is a non-empty one, else the whole key.
    static func hashed(_ key: [UInt8]) -> ArraySlice<UInt8> {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")),
            let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")),
            close > open + 1
        else { return key[...] }
        return key[(open + 1)..<close]
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}
