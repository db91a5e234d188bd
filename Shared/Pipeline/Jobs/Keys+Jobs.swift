extension Keys {
    /// The status hash of a job, in the jobs stream's slot so that an ack function can update it atomically:
    /// `tg:{p0}:job:<id>`.
    package func job(_ jobID: String, partition: Int = 0) -> String {
        partitionKey(partition, "job", jobID)
    }

    /// The channel on which job ids are published when their status becomes final (`tg:job-results`).
    package var jobResultsChannel: String { prefix + ":job-results" }
}
