/// A stream entry id `<ms>-<seq>`, ordered numerically (string order is wrong: `9-0` < `10-0`).
package struct StreamID: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var milliseconds: UInt64
    package var sequence: UInt64

    package init(milliseconds: UInt64, sequence: UInt64 = 0) {
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    /// Parses `ms-seq` or `ms`; nil for anything else.
    package init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, let ms = UInt64(parts[0]) else { return nil }
        milliseconds = ms
        if parts.count == 2 {
            guard let seq = UInt64(parts[1]) else { return nil }
            sequence = seq
        } else {
            sequence = 0
        }
    }

    /// The smallest id greater than this one.
    package var successor: StreamID {
        sequence == .max
            ? StreamID(milliseconds: milliseconds + 1, sequence: 0)
            : StreamID(milliseconds: milliseconds, sequence: sequence + 1)
    }

    package static func < (lhs: StreamID, rhs: StreamID) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    package var description: String { "\(milliseconds)-\(sequence)" }
}
