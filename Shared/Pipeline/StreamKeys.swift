/// A stream and the keys derived from it, all in the stream's hash slot.
public struct StreamKeys: Sendable, Hashable, CustomStringConvertible {
    /// The stream itself, e.g. `tg:{p0}:jobs`.
    public let stream: String
    /// The retry ZSET, scored by due time in milliseconds: `tg:{p0}:jobs:retry`.
    public var retry: String { stream + ":retry" }
    /// The dead-letter stream: `tg:{p0}:jobs:dead`.
    public var deadLetter: String { stream + ":dead" }

    /// Wraps a stream key; derived keys append to it, so they share its hash tag.
    public init(stream: String) {
        self.stream = stream
    }

    public var description: String { stream }
}
