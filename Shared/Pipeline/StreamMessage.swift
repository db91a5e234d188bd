package import Redis

/// One entry handed to a handler, with what the runtime knows about its history.
package struct StreamMessage: Sendable {
    /// The stream the entry was read from.
    package var stream: String
    /// The partition of that stream (``Keys/partitions``); 0 with one partition.
    package var partition: Partition
    /// The entry (id and fields; the runtime's `pipeline.*` fields included).
    package var entry: StreamEntry
    /// The attempt number, 1 for the first; grows with each scheduled retry.
    package var attempt: Int
    /// How many times this entry id was delivered (grows with reclaims after crashes).
    package var deliveryCount: Int
    /// The error of the previous attempt, when this is a retry.
    package var lastError: String?
    /// True when a `.retry` outcome would dead-letter the entry instead.
    package var isLastAttempt: Bool

    package init(
        stream: String, partition: Partition = .first, entry: StreamEntry, attempt: Int, deliveryCount: Int, lastError: String?,
        isLastAttempt: Bool
    ) {
        self.stream = stream
        self.partition = partition
        self.entry = entry
        self.attempt = attempt
        self.deliveryCount = deliveryCount
        self.lastError = lastError
        self.isLastAttempt = isLastAttempt
    }
}
