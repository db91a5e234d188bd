/// The Redis 7 `XAUTOCLAIM` reply: where to continue, the entries now owned, and IDs no longer in the stream.
public struct AutoClaimResult: Sendable {
    /// The start ID for the next call; `0-0` once the whole pending list was scanned.
    public var nextStart: String
    public var entries: [StreamEntry]
    /// Pending IDs whose entries were deleted (trimmed); Redis removed them from the pending list.
    public var deletedIDs: [String]

    public init(nextStart: String, entries: [StreamEntry], deletedIDs: [String]) {
        self.nextStart = nextStart
        self.entries = entries
        self.deletedIDs = deletedIDs
    }
}
