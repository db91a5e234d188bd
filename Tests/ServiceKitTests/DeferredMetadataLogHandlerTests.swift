import Logging
import ServiceKit
import Synchronization
import Testing

/// ``DeferredMetadataLogHandler`` writes exactly the lines `StreamLogHandler` writes (same metadata precedence: the
/// logger's, then its provider's, then the line's), whatever was set on the logger in between.
@Suite struct DeferredMetadataLogHandlerTests {
    final class Collected: TextOutputStream, Sendable {
        private let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
        /// The lines without their timestamps (the two handlers write a second apart at worst).
        var lines: [String] {
            text.withLock { $0 }.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 1).last.map(String.init) ?? "" }
        }
    }

    @Test func linesAreStreamLogHandlersLinesWhateverWasSetBetweenThem() {
        let plain = Collected()
        let deferred = Collected()
        let provider = Logger.MetadataProvider { ["p": "provided", "shadowed": "by the provider"] }
        var loggers = [
            Logger(label: "t") { StreamLogHandler(label: $0, stream: plain, metadataProvider: provider) },
            Logger(label: "t") { DeferredMetadataLogHandler(StreamLogHandler(label: $0, stream: deferred, metadataProvider: provider)) },
        ]
        for index in loggers.indices {
            loggers[index].logLevel = .info
            loggers[index].info("no metadata of its own")
            loggers[index][metadataKey: "b"] = "2"
            loggers[index][metadataKey: "a"] = "1"
            loggers[index][metadataKey: "shadowed"] = "by the logger"
            loggers[index].info("with metadata")
            loggers[index].debug("below the level: not written")
            loggers[index].warning("the line's metadata wins", metadata: ["b": "3", "p": "explicit"])
            loggers[index][metadataKey: "a"] = nil
            loggers[index].error("after a key was removed", error: Failure())
            var copy = loggers[index]
            copy[metadataKey: "job"] = "j1"
            copy.info("a copy's own key")
            loggers[index].info("the original is unchanged")
        }
        #expect(deferred.lines.count == 6, "\(deferred.lines)")
        #expect(deferred.lines == plain.lines)
        #expect(deferred.lines.contains { $0.contains("a=1 b=3 p=explicit shadowed=by the provider") }, "\(deferred.lines)")
    }

    struct Failure: Error {}
}
