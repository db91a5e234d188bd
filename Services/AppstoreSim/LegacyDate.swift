import Core
import Foundation

/// Apple's legacy date fields: `<name>` as `yyyy-MM-dd HH:mm:ss Etc/GMT`, `<name>_ms` as a string of
/// milliseconds, `<name>_pst` in `America/Los_Angeles`.
enum LegacyDate {
    private static let pacific = TimeZone(identifier: "America/Los_Angeles")

    /// The three fields for `millis` under `name`.
    static func fields(_ name: String, _ millis: Int64) -> [String: Any] {
        [
            name: gmt(millis),
            name + "_ms": String(millis),
            name + "_pst": pst(millis),
        ]
    }

    static func gmt(_ millis: Int64) -> String {
        civil(millis / 1000) + " Etc/GMT"
    }

    static func pst(_ millis: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
        let offset = Int64(pacific?.secondsFromGMT(for: date) ?? -8 * 3600)
        return civil(millis / 1000 + offset) + " America/Los_Angeles"
    }

    /// `yyyy-MM-dd HH:mm:ss` for seconds since 1970 (``Core/UTCTime``).
    static func civil(_ seconds: Int64) -> String {
        let t = UTCTime.civil(seconds: seconds)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(t.year)-\(two(t.month))-\(two(t.day)) \(two(t.hour)):\(two(t.minute)):\(two(t.second))"
    }
}
