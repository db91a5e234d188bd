extension Keys {
    /// The status hash of a job in its home partition, the one its id names (``partition(ofJob:)``), which is the
    /// slot of the jobs stream it was enqueued on, so that an ack function can update it atomically:
    /// `tg:{p0}:job:<id>`. An id that names no partition of this layout maps to partition 0; readers check
    /// ``partition(ofJob:)`` first (``readJobStatus(_:on:)``).
    package func job(_ jobID: String) -> String {
        job(jobID, partition: partition(ofJob: jobID) ?? .first)
    }

    /// The status hash of a job in `partition` (`tg:{P}:job:<id>`): its home partition, or the partition its event
    /// was moved to (``JobStatus/movedToField``).
    package func job(_ jobID: String, partition: Partition) -> String {
        partitionKey(partition, "job", jobID)
    }

    /// The channel on which job ids are published when their status becomes final (`tg:job-results`).
    package var jobResultsChannel: String { prefix + ":job-results" }
}
