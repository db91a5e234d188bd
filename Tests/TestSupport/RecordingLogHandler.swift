package import Logging
import Synchronization

/// What a ``RecordingLogHandler`` received: each line's message and its metadata as a handler would write it (its
/// own, then its metadata provider's, then the line's).
package final class RecordedLines: Sendable {
    package struct Line: Sendable, CustomStringConvertible {
        package var message: String
        package var metadata: Logger.Metadata
        package var description: String { "\(message) \(metadata)" }
    }

    private let lines = Mutex<[Line]>([])
    package init() {}
    package var all: [Line] { lines.withLock { $0 } }
    package func append(_ line: Line) { lines.withLock { $0.append(line) } }
}

/// A log handler that keeps every line in `sink`, for tests of what code logs.
package struct RecordingLogHandler: LogHandler {
    let sink: RecordedLines
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package var logLevel: Logger.Level = .info

    package init(sink: RecordedLines) { self.sink = sink }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        merged.merge(metadataProvider?.get() ?? [:]) { $1 }
        merged.merge(event.metadata ?? [:]) { $1 }
        sink.append(RecordedLines.Line(message: event.message.description, metadata: merged))
    }
}
