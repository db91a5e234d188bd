/// The Redis 7 `XAUTOCLAIM` reply: where to continue, the entries now owned, and IDs no longer in the stream.
package struct AutoClaimResult: Sendable {
    /// The start ID for the next call; `0-0` once the whole pending list was scanned.
    package var nextStart: String
    package var entries: [StreamEntry]
    /// Pending IDs whose entries were deleted (trimmed); Redis removed them from the pending list.
    package var deletedIDs: [String]

    package init(nextStart: String, entries: [StreamEntry], deletedIDs: [String]) {
        self.nextStart = nextStart
        self.entries = entries
        self.deletedIDs = deletedIDs
    }
}
