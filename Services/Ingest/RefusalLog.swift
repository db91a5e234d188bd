import Core
import Crypto
import Foundation
import Logging
import Pipeline
import Synchronization

/// Refused credentials in the log (issue 42, item 12): an API key no entry of `TOLLGATE_SERVICE_KEYS` holds, a user
/// token refused, a key without the scope a route needs. At most one line per ``interval``, counting the refusals it
/// left out since the last line (`suppressed`), so that a flood of bad keys cannot flood the log.
///
/// A line says why (the refusal's own constant message) and at most a hint that cannot give the secret back: a known
/// key's name, or for an unknown API key `key-` and the first 8 hex digits of its SHA-256, as a bare key is named
/// (``ServiceKey``), so that a key dropped from the list shows under its old name. Never a key or a token
/// (STYLE.md: never log secrets or tokens).
final class RefusalLog: Sendable {
    /// The shortest time between two lines.
    static let interval: Duration = .seconds(10)

    private struct State {
        var lastLine: Int64?
        var suppressed = 0
    }

    private let state = Mutex(State())
    private let logger: Logger
    private let clock: PipelineClock
    private let intervalMilliseconds: Int64

    init(logger: Logger, clock: PipelineClock = .system, interval: Duration = RefusalLog.interval) {
        (self.logger, self.clock) = (logger, clock)
        intervalMilliseconds = interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000
    }

    /// The hint for an API key no entry holds: `key-` and 8 hex digits of its SHA-256.
    static func hint(unknownKey key: String) -> String {
        "key-" + Hex.lowercase(Array(SHA256.hash(data: Data(key.utf8))).prefix(4))
    }

    /// Logs a refusal, or counts it when the last line is younger than the interval. `reason` is a constant message
    /// (never holding what the caller sent); `key` a key's name or ``hint(unknownKey:)``.
    func record(reason: String, key: String? = nil) {
        let now = clock.nowMilliseconds()
        let suppressed: Int? = state.withLock { state in
            if let last = state.lastLine, now - last < intervalMilliseconds {
                state.suppressed += 1
                return nil
            }
            defer { (state.lastLine, state.suppressed) = (now, 0) }
            return state.suppressed
        }
        guard let suppressed else { return }
        var metadata: Logger.Metadata = ["reason": "\(reason)", "suppressed": "\(suppressed)"]
        if let key { metadata["key"] = "\(key)" }
        logger.warning("credentials refused", metadata: metadata)
    }
}
