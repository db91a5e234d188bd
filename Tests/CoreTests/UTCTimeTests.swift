import Core
import Foundation
import Testing

/// ``UTCTime`` writes what Foundation's formatter writes, for every kind of day: leap days, century years, the
/// epoch, before 1970, the last millisecond of a year. From 1583 on: before the Gregorian reform Foundation writes
/// Julian dates, where ISO 8601 (and ``UTCTime``) keeps the proleptic Gregorian calendar.
@Suite struct UTCTimeTests {
    @Test func iso8601MatchesFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var generator = SystemRandomNumberGenerator()
        let fixed: [Int64] = [
            0, 1, 999, 1000, -1, -1000, -86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_399_999,
            1_767_225_600_000, 253_402_300_799_999, -2_208_988_800_000, 1_709_164_800_123,
        ]
        let random = (0..<5000).map { _ in Int64.random(in: -12_212_553_600_000...253_402_300_799_999, using: &generator) }
        for milliseconds in fixed + random {
            let expected = formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            #expect(UTCTime.iso8601(milliseconds: milliseconds) == expected, "\(milliseconds)")
        }
    }

    /// What ``UTCTime/iso8601(milliseconds:)`` writes reads back to the same millisecond; any other form is refused.
    @Test func iso8601ReadsBackWhatItWrites() {
        var generator = SystemRandomNumberGenerator()
        let fixed: [Int64] = [0, 999, -1, 951_782_400_000, 1_767_225_600_000, 253_402_300_799_999]
        for milliseconds in fixed + (0..<5000).map({ _ in Int64.random(in: 0...253_402_300_799_999, using: &generator) }) {
            #expect(UTCTime.milliseconds(iso8601: UTCTime.iso8601(milliseconds: milliseconds)) == milliseconds)
        }
        #expect(UTCTime.milliseconds(iso8601: "2026-01-01T00:00:00Z") == 1_767_225_600_000)
        for bad in [
            "", "2026-01-01", "2026-01-01T00:00:00.000", "2026-13-01T00:00:00Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00+01:00",
        ] {
            #expect(UTCTime.milliseconds(iso8601: bad) == nil, "\(bad)")
        }
    }
}
