/// Whole units of a `Duration`, as Redis arguments and timeouts take them (every module uses these).
extension Duration {
    /// Whole microseconds (truncated).
    package var microseconds: Int64 {
        let parts = components
        return parts.seconds * 1_000_000 + parts.attoseconds / 1_000_000_000_000
    }

    /// Whole milliseconds (truncated), as Redis expects for BLOCK, IDLE and min-idle-time.
    package var milliseconds: Int64 {
        let parts = components
        return parts.seconds * 1_000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
