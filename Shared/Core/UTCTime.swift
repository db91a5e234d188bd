/// Times as text without Foundation's formatters (an `ISO8601DateFormatter` cost about 70 µs to make on Linux, and
/// the customer API writes two dates per transaction): proleptic Gregorian from days since 1970, after Howard
/// Hinnant's `civil_from_days`.
package enum UTCTime {
    /// The civil date and time of `seconds` since 1970, UTC.
    package static func civil(seconds: Int64) -> (year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64) {
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
        return (year, month, day, secondOfDay / 3600, secondOfDay % 3600 / 60, secondOfDay % 60)
    }

    /// Milliseconds since 1970 as ISO 8601 UTC with milliseconds, `2026-11-22T05:57:36.000Z`, as every HTTP answer
    /// writes times (the text `ISO8601DateFormatter` with fractional seconds writes from 1583 to 9999; before the Gregorian reform it
    /// writes Julian dates, this the proleptic Gregorian calendar ISO 8601 keeps).
    package static func iso8601(milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let fraction = milliseconds - seconds * 1000
        let t = civil(seconds: seconds)
        var text = [UInt8]()
        text.reserveCapacity(24)
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(t.year, 4)
        text.append(UInt8(ascii: "-"))
        digits(t.month, 2)
        text.append(UInt8(ascii: "-"))
        digits(t.day, 2)
        text.append(UInt8(ascii: "T"))
        digits(t.hour, 2)
        text.append(UInt8(ascii: ":"))
        digits(t.minute, 2)
        text.append(UInt8(ascii: ":"))
        digits(t.second, 2)
        text.append(UInt8(ascii: "."))
        digits(fraction, 3)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// Milliseconds since 1970 of ISO 8601 UTC text as ``iso8601(milliseconds:)`` writes it
    /// (`2026-11-22T05:57:36.123Z`; without the fraction too), after Hinnant's `days_from_civil`; nil for any other
    /// form.
    package static func milliseconds(iso8601 text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20 || bytes.count == 24, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ from: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[from..<from + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, UInt8)] = [
            (4, UInt8(ascii: "-")), (7, UInt8(ascii: "-")), (10, UInt8(ascii: "T")), (13, UInt8(ascii: ":")), (16, UInt8(ascii: ":")),
        ]
        guard separators.allSatisfy({ bytes[$0.0] == $0.1 }) else { return nil }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2), (1...12).contains(month), (1...31).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction: Int64 = 0
        if bytes.count == 24 {
            guard bytes[19] == UInt8(ascii: "."), let value = number(20, 3) else { return nil }
            fraction = value
        }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return ((days * 86_400 + hour * 3600 + minute * 60 + second) * 1000) + fraction
    }
}
