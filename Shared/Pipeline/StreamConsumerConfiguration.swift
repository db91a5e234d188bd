/// How a ``StreamConsumer`` reads, runs and retries. Defaults suit production; tests shorten the times.
package struct StreamConsumerConfiguration: Sendable {
    /// The partitions' streams to consume (with their retry/dead-letter keys): one reader each, sharing the
    /// handler slots fairly. Never empty.
    package var streams: [PartitionStream]
    /// The consumer group (one per stage, shared by all its replicas).
    package var group: String
    /// This replica's consumer name; unique per process (see ``ConsumerName/unique()``).
    package var consumer: String
    /// Handlers running at once (the bounded task group's width).
    package var concurrency: Int
    /// `COUNT` of each read and claim.
    package var readCount: Int
    /// `BLOCK` of the reads for new entries; also bounds how long a shutdown waits for the reader.
    package var block: Duration
    /// Entries idle longer than this are reclaimed from crashed consumers; keep it well above the slowest
    /// handler (Apple HTTP timeouts included), or a slow entry is handled twice (the ack gate keeps the
    /// outcome single, not the side effects outside Redis).
    package var claimMinIdle: Duration
    /// How often `XAUTOCLAIM` runs.
    package var claimInterval: Duration
    /// An entry delivered more than this many times is poison: dead-lettered without calling the handler (not on a
    /// shared stream, ``sharesStream``).
    package var maxDeliveries: Int
    /// The streams are read by other groups too (the events streams: the notifier's, the exporter's, an app's own),
    /// so this group's outcomes must not change them: an entry is acknowledged with `XACK` only (`ack_shared`), never
    /// deleted; a dead letter is a copy; a `.retry` leaves it pending (it is delivered again once idle past
    /// ``claimMinIdle``), as nothing may be re-added to the stream; `.complete` takes no writes; and there is no
    /// poison limit: the handler decides when an entry is dead.
    package var sharesStream = false
    /// Backoff and attempt limit of `.retry` outcomes.
    package var retry: RetryPolicy
    /// On graceful shutdown, how long in-flight handlers may take before they are cancelled (and their
    /// entries left pending for another consumer).
    package var drainTimeout: Duration

    /// One stream, partition `partition` (0: the single partition of layout 1).
    package init(
        stream: StreamKeys,
        partition: Partition = .first,
        group: String,
        consumer: String = ConsumerName.unique(),
        concurrency: Int = 16,
        readCount: Int = 16,
        block: Duration = .seconds(2),
        claimMinIdle: Duration = .seconds(60),
        claimInterval: Duration = .seconds(5),
        maxDeliveries: Int = 5,
        retry: RetryPolicy = RetryPolicy(),
        drainTimeout: Duration = .seconds(10)
    ) {
        self.init(
            streams: [PartitionStream(partition: partition, keys: stream)], group: group, consumer: consumer,
            concurrency: concurrency, readCount: readCount, block: block, claimMinIdle: claimMinIdle,
            claimInterval: claimInterval, maxDeliveries: maxDeliveries, retry: retry, drainTimeout: drainTimeout)
    }

    /// Several partitions of one stage, e.g. `keys.partitionStreams("jobs")` (at least one: a consumer without
    /// streams refuses to run).
    package init(
        streams: [PartitionStream],
        group: String,
        consumer: String = ConsumerName.unique(),
        concurrency: Int = 16,
        readCount: Int = 16,
        block: Duration = .seconds(2),
        claimMinIdle: Duration = .seconds(60),
        claimInterval: Duration = .seconds(5),
        maxDeliveries: Int = 5,
        retry: RetryPolicy = RetryPolicy(),
        drainTimeout: Duration = .seconds(10)
    ) {
        self.streams = streams
        self.group = group
        self.consumer = consumer
        self.concurrency = max(1, concurrency)
        self.readCount = max(1, readCount)
        self.block = max(.milliseconds(1), block)
        self.claimMinIdle = claimMinIdle
        self.claimInterval = claimInterval
        self.maxDeliveries = max(1, maxDeliveries)
        self.retry = retry
        self.drainTimeout = drainTimeout
    }
}
