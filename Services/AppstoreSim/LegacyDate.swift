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

    /// `yyyy-MM-dd HH:mm:ss` for seconds since 1970 (proleptic Gregorian, Howard Hinnant's algorithm).
    static func civil(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))"
    }
}
