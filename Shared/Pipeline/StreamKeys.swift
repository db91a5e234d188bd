/// A stream and the keys derived from it, all in the stream's hash slot.
package struct StreamKeys: Sendable, Hashable, CustomStringConvertible {
    /// The stream itself, e.g. `tg:{p0}:jobs`.
    package let stream: String
    /// The retry ZSET, scored by due time in milliseconds: `tg:{p0}:jobs:retry`.
    package var retry: String { stream + ":retry" }
    /// The dead-letter stream: `tg:{p0}:jobs:dead`.
    package var deadLetter: String { stream + ":dead" }

    /// Wraps a stream key; derived keys append to it, so they share its hash tag.
    package init(stream: String) {
        self.stream = stream
    }

    package var description: String { stream }
}
