extension Duration {
    /// Whole nanoseconds (saturating), for NIO's `TimeAmount`.
    package var nanoseconds: Int64 {
        let parts = components
        let (seconds, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : seconds + parts.attoseconds / 1_000_000_000
    }
}
