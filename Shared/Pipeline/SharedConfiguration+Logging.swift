import Logging

extension SharedConfiguration {
    /// Sends every logger of the process to standard error at `LOG_LEVEL` (at most `ceiling`, e.g. `.warning`
    /// for a one-shot command whose standard output is its report). Call once, before the first `Logger`.
    package func bootstrapLogging(ceiling: Logger.Level? = nil) {
        let level = ceiling.map { Swift.min(logLevel, $0) } ?? logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
