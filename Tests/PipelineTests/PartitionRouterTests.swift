import Pipeline
import Redis
import Testing

/// ``PartitionRouter``'s answers for 1, 4 and 16 partitions, against values worked out outside Swift: CRC16/XMODEM
/// of the id (check value 0x31C3 for "123456789") modulo N, as docs/CLUSTER.md §3 defines `Pu` and `Po`.
@Suite struct PartitionRouterTests {
    static let counts = [1, 4, 16]

    /// An id, its CRC16/XMODEM, and its partition with 1, 4 and 16 partitions.
    static let hashed: [(id: String, crc: Int, partitions: [Int])] = [
        ("alice", 49901, [0, 1, 13]),
        ("bob", 41723, [0, 3, 11]),
        ("carol", 55358, [0, 2, 14]),
        ("42", 57152, [0, 0, 0]),
        ("user-7", 36920, [0, 0, 8]),
        ("1000000123", 45396, [0, 0, 4]),
        ("2000000456", 8793, [0, 1, 9]),
        ("20000017", 10953, [0, 1, 9]),
        ("abc-def", 39409, [0, 1, 1]),
        ("0f8e6d1c-3b2a-4c5d-9e8f-7a6b5c4d3e2f", 42307, [0, 3, 3]),
    ]

    static func router(_ count: Int) throws -> PartitionRouter { PartitionRouter(layout: try PartitionLayout(count: count)) }

    @Test func usersChainsAndHashedIdsAreCRC16ModuloN() throws {
        #expect(ClusterKeySlot.crc16("123456789".utf8) == 0x31C3)
        for (id, crc, partitions) in Self.hashed {
            #expect(Int(ClusterKeySlot.crc16(id.utf8)) == crc, "\(id)")
            for (count, expected) in zip(Self.counts, partitions) {
                let router = try Self.router(count)
                #expect(router.partition(ofUser: id) == Partition(expected), "\(id) of \(count)")
                #expect(router.partition(ofOriginalTransaction: id) == Partition(expected), "\(id) of \(count)")
                #expect(router.partition(hashing: id) == Partition(expected), "\(id) of \(count)")
            }
        }
    }

    @Test func aJobIDNamesItsPartitionInItsFirstFourHexDigits() throws {
        let tail = String(repeating: "a", count: 28)
        // The id's partition, then the answer with 1, 4 and 16 partitions (nil: no partition of that layout).
        let cases: [(String, [Int?])] = [
            ("0000" + tail, [0, 0, 0]), ("0003" + tail, [0, 3, 3]), ("000a" + tail, [0, nil, 10]),
            ("000f" + tail, [0, nil, 15]), ("0010" + tail, [0, nil, nil]), ("ffff" + tail, [0, nil, nil]),
        ]
        for (id, answers) in cases {
            for (count, expected) in zip(Self.counts, answers) {
                #expect(try Self.router(count).partition(ofJob: id) == expected.map { Partition($0) }, "\(id) of \(count)")
            }
        }
        for count in Self.counts {
            for bad in ["", "0000", "0000" + tail + "0", "0000" + String(repeating: "A", count: 28), "000g" + tail] {
                #expect(try Self.router(count).partition(ofJob: bad) == nil, "\(bad) of \(count)")
            }
        }
    }

    @Test func aNotificationGoesToItsChainElseItsUUID() throws {
        for (index, count) in Self.counts.enumerated() {
            let router = try Self.router(count)
            // Po("1000000123") = 0, 0, 4; the uuid "abc-def" (lower-cased first) hashes to 0, 1, 1.
            let chain = Partition([0, 0, 4][index])
            let uuid = Partition([0, 1, 1][index])
            #expect(router.partition(ofNotification: "1000000123", uuid: "abc-def") == chain)
            #expect(router.partition(ofNotification: "1000000123", uuid: nil) == chain)
            #expect(router.partition(ofNotification: nil, uuid: "ABC-DEF") == uuid)
            #expect(router.partition(ofNotification: "", uuid: "abc-def") == uuid)
            #expect(router.partition(ofNotification: nil, uuid: nil) == nil)
            #expect(router.partition(ofNotification: "", uuid: "") == nil)
        }
    }

    @Test func aSubmissionGoesToItsSubmitterElseItsNotificationElseItsDedupeHash() throws {
        for (index, count) in Self.counts.enumerated() {
            let router = try Self.router(count)
            // Pu("alice") = 0, 1, 13; Po("2000000456") = 0, 1, 9; "user-7" = 0, 0, 8; the uuid "abc-def" = 0, 1, 1.
            let alice = Partition([0, 1, 13][index])
            let chain = Partition([0, 1, 9][index])
            let hash = Partition([0, 0, 8][index])
            let uuid = Partition([0, 1, 1][index])
            #expect(router.partition(ofSubmissionBy: "alice", notification: nil, dedupeHash: "user-7") == alice)
            #expect(
                router.partition(ofSubmissionBy: "alice", notification: ("2000000456", nil), dedupeHash: "user-7") == alice)
            #expect(router.partition(ofSubmissionBy: nil, notification: ("2000000456", "x"), dedupeHash: "user-7") == chain)
            #expect(router.partition(ofSubmissionBy: nil, notification: (nil, "ABC-def"), dedupeHash: "user-7") == uuid)
            #expect(router.partition(ofSubmissionBy: nil, notification: (nil, nil), dedupeHash: "user-7") == hash)
            #expect(router.partition(ofSubmissionBy: nil, notification: nil, dedupeHash: "user-7") == hash)
        }
    }
}
