package import Logging

extension SharedConfiguration {
    /// Sends every logger of the process to standard error at `LOG_LEVEL` (at most `ceiling`, e.g. `.warning`
    /// for a one-shot command whose standard output is its report). Call once, before the first `Logger`.
    package func bootstrapLogging(ceiling: Logger.Level? = nil) {
        let level = ceiling.map { Swift.min(logLevel, $0) } ?? logLevel
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
    }
}

/// `StreamLogHandler`'s lines, with the logger's metadata rendered only when a line is written.
///
/// `StreamLogHandler` renders all of its metadata again each time one key is set. Hummingbird sets the request id on
/// every request's logger, and a job's consumer its stream, entry and attempt: that rendering was 2 % of ingest's
/// CPU and more of the fulfiller's, for lines that are mostly never written. This handler keeps the metadata aside
/// and hands it, merged as `StreamLogHandler` would merge it (the logger's, then its provider's, then the line's), to
/// a `StreamLogHandler` that holds none: the same lines, rendered when written.
package struct DeferredMetadataLogHandler: LogHandler {
    private var stream: StreamLogHandler
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?

    package init(_ stream: StreamLogHandler) {
        self.stream = stream
        metadata = stream.metadata
        metadataProvider = stream.metadataProvider
        self.stream.metadata = [:]
        self.stream.metadataProvider = nil
    }

    package var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var event = event
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { merged.merge(provided) { $1 } }
        if let explicit = event.metadata, !explicit.isEmpty { merged.merge(explicit) { $1 } }
        event.metadata = merged
        stream.log(event: event)
    }
}
