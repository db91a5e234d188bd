package import Foundation

/// Parses an HTTP `Retry-After` value (RFC 9110 §10.2.3): either a number of seconds or an HTTP date.
///
/// The delay is clamped to ``maximum``: a server (or anything pretending to be one) asking for days would
/// otherwise park a job, and its client's `?wait`, far beyond any retry schedule.
package enum RetryAfter {
    /// The longest delay honoured.
    package static let maximum: Duration = .seconds(3600)

    /// The delay the value asks for, never negative, at most ``maximum``; `nil` when the value is neither form.
    package static func parse(_ value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        let limit = maximum.components.seconds
        if let seconds = Int64(trimmed) {
            return seconds >= 0 ? .seconds(min(seconds, limit)) : nil
        }
        if trimmed.allSatisfy(\.isNumber), !trimmed.isEmpty { return .seconds(limit) }  // beyond Int64
        guard let date = httpDate(trimmed) else { return nil }
        let interval = min(max(0, date.timeIntervalSince(now)), Double(limit))
        return .seconds(Int64(interval.rounded(.up)))
    }

    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
