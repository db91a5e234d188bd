import AppStore
import Core
package import Logging
package import Pipeline
package import Redis

/// The verifier's stream handler: reads the job, marks it `verifying`, verifies it (with a heartbeat
/// keeping a slow healthy call from being reclaimed; neither for a job verified by local work only, see
/// ``JobVerifier/isLocal(_:)``), and turns the ``VerificationOutcome`` into the
/// ``HandlerOutcome`` whose writes the runtime applies atomically with the ack:
///
/// - verified → `XADD` of the ``PurchaseEvent``, placed on its ledger side (``LedgerSide``), onto the verified stream,
///   status `verifying` with `verified.at` (the fulfiller sets the final state) and the event's `project` (the app's
///   Apple signed, ``JobVerifier/placeProject(_:job:)``: a notification's status is then read by its project's keys
///   only, docs/PROJECTS.md);
/// - recorded → status `fulfilled` with `result` (and a notification's `project`), `PUBLISH`;
/// - rejected → status `rejected` with the stable `reason` code and `message`, `PUBLISH`; kept an hour with its
///   dedupe key (Apple vouched for nothing in it);
/// - retryable → the runtime schedules the retry (full-jitter backoff, or Apple's `Retry-After` when longer) and
///   hands its schedule to the status write: `retrying` with `attempt` and `next.at` exactly the retry's due time;
///   after the last attempt the runtime dead-letters it with ``deadLetterWrites(_:_:)`` (status `dead`, `PUBLISH`);
/// - a malformed entry → dead letter (status `dead` when the entry names its job), never a crash.
///
/// Every final outcome (complete or dead letter, never a retry) takes a counted job off its source's backlog
/// (``Job/backlogRelease(of:keys:partition:)``) in the same atomic step.
///
/// Every key it writes is in the partition of the jobs stream the entry came from (``StreamMessage/partition``):
/// the job's hash, its backlog, and the verified stream the event goes to, so the ack stays one slot and the
/// fulfiller of that partition picks the event up.
package final class JobHandler: Sendable {
    let verifier: JobVerifier
    let redis: any RedisCommandExecutor
    let keys: Keys
    let group: String
    let consumer: String
    let heartbeatInterval: Duration
    let clock: PipelineClock
    let metrics: VerifierMetrics
    let logger: Logger

    package init(
        verifier: JobVerifier, redis: any RedisCommandExecutor, keys: Keys, group: String, consumer: String,
        heartbeatInterval: Duration, clock: PipelineClock, metrics: VerifierMetrics, logger: Logger
    ) {
        self.verifier = verifier
        self.redis = redis
        self.keys = keys
        self.group = group
        self.consumer = consumer
        self.heartbeatInterval = heartbeatInterval
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// Handles one entry of the jobs stream.
    package func handle(_ message: StreamMessage) async throws -> HandlerOutcome {
        let job: Job
        do {
            job = try Job(entry: message.entry)
        } catch {
            metrics.job(kind: message.entry.string(Job.Field.kind) ?? "unknown", outcome: "malformed")
            let reason = "malformed_entry: \(error.message)"
            logger.warning("Malformed job entry; dead-lettering", metadata: ["entry.id": "\(message.entry.id)"])
            return .deadLetter(reason: reason, writes: deadLetterWrites(message, reason))
        }
        var logger = logger
        logger[metadataKey: "job.id"] = "\(job.id)"
        logger[metadataKey: "job.kind"] = "\(job.kind.rawValue)"
        let outcome: VerificationOutcome
        if verifier.isLocal(job) {
            // Local work only, done in well under a millisecond: a `verifying` mark first (a round trip) and a
            // heartbeat (a task and a timer) would cost more than the verification; the outcome's write says
            // `verifying` with the attempt, or the final state, in the same call as the ack.
            outcome = await verifier.verify(job)
        } else {
            do {
                try await VerifierFunctions.markVerifying(
                    on: redis, key: keys.job(job.id, partition: message.partition), attempt: message.attempt,
                    nowMilliseconds: clock.nowMilliseconds())
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.warning("Could not mark the job verifying", metadata: ["error": "\(error)"])
            }
            let heartbeat = Heartbeat(
                redis: redis, stream: message.stream, group: group, consumer: consumer, entryID: message.entry.id,
                interval: heartbeatInterval, logger: logger)
            outcome = await heartbeat.run { await verifier.verify(job) }
        }
        if Task.isCancelled { throw CancellationError() }
        metrics.job(kind: job.kind.rawValue, outcome: outcome.metricName)
        return handlerOutcome(outcome, job: job, message: message, logger: logger)
    }

    func handlerOutcome(_ outcome: VerificationOutcome, job: Job, message: StreamMessage, logger: Logger) -> HandlerOutcome {
        let now = clock.nowMilliseconds()
        let partition = message.partition
        let release = Job.backlogRelease(of: message.entry, keys: keys, partition: partition)
        switch outcome {
        case .verified(var event):
            event.placeSide(deploymentIsProduction: verifier.configuration.environment == .production)
            let fields: [(String, [UInt8])]
            do {
                fields = try event.streamFields()
            } catch {
                return .retry(reason: "event_encoding_failed: \(error)")
            }
            logger.info("Job verified", metadata: ["transactions": "\(event.transactions.count)", "environment": "\(event.environment)"])
            var status = JobStatus(
                jobID: job.id, state: .verifying, kind: job.kind, userID: job.userID, attempt: message.attempt,
                updatedAtMilliseconds: now, verifiedAtMilliseconds: now)
            // The project the event was placed in (nil: default, and nothing written, so a client job keeps its own).
            status.project = event.project
            return .complete(
                writes: [
                    .xadd(stream: keys.verified(partition: partition).stream, fields: fields),
                    status.write(keys: keys, partition: partition),
                ] + seen(event.notification?.notificationUUID, job, partition: partition) + release)
        case .recorded(let result, let uuid, let project):
            logger.info("Job recorded")
            var status = JobStatus(
                jobID: job.id, state: .fulfilled, kind: job.kind, userID: job.userID,
                updatedAtMilliseconds: now, resultJSON: result)
            status.project = project?.label
            return .complete(
                writes: [status.write(keys: keys, partition: partition)]
                    + seen(uuid, job, partition: partition) + release)
        case .duplicate(let first):
            logger.info("Notification already verified by another job", metadata: ["first.job.id": "\(first)"])
            let status = JobStatus(
                jobID: job.id, state: .fulfilled, kind: job.kind, userID: job.userID, updatedAtMilliseconds: now,
                resultJSON: #"{"outcome":"duplicate","firstJobId":"\#(first)"}"#)
            return .complete(writes: brief(status, job, partition: partition) + release)
        case .rejected(let failure):
            // The app gets the code and its sentence; what exactly failed (library errors, certificates, Apple's
            // answers) is for the log only.
            logger.info("Job rejected", metadata: ["reason": "\(failure.code.rawValue)", "detail": "\(failure.message)"])
            let status = JobStatus(
                jobID: job.id, state: .rejected, kind: job.kind, userID: job.userID,
                reason: failure.code.rawValue, message: failure.code.sentence, updatedAtMilliseconds: now)
            // Not vouched for by Apple: its status and its dedupe key go within the hour.
            return .complete(writes: brief(status, job, partition: partition) + release)
        case .retryable(let failure, let retryAfter):
            if !message.isLastAttempt { metrics.retryScheduled(kind: job.kind.rawValue, code: failure.code.rawValue) }
            logger.info(
                "Job will be retried",
                metadata: ["reason": "\(failure.code.rawValue)", "detail": "\(failure.message)", "attempt": "\(message.attempt)"])
            let keys = keys
            return .retry(reason: failure.description, notBefore: retryAfter) { schedule in
                [
                    JobStatus(
                        jobID: job.id, state: .retrying, kind: job.kind, userID: job.userID,
                        reason: failure.code.rawValue, message: failure.code.sentence, attempt: schedule.attempt,
                        nextAttemptAtMilliseconds: schedule.dueMilliseconds,
                        updatedAtMilliseconds: schedule.scheduledAtMilliseconds
                    ).write(keys: keys, partition: partition)
                ]
            }
        }
    }

    /// How long the first verifying job of a notification is remembered (Apple retries for 3 days).
    static let verifiedNotificationSeconds = 14 * 86_400

    /// Remembers the job that verified a V2 notification, with that job's acknowledgement: in the partition of the
    /// stream it is acknowledged on (the slot of the ack), which is the partition its id names and the one every copy
    /// of the notification starts in (``Keys/partition(ofNotification:uuid:)``).
    func seen(_ uuid: String?, _ job: Job, partition: Partition) -> [PipelineWrite] {
        guard let uuid, !uuid.isEmpty, job.kind == .notificationV2 else { return [] }
        return [
            .hset(
                key: keys.verifiedNotification(uuid: uuid, partition: partition), strings: [("job", job.id)],
                expireSeconds: Self.verifiedNotificationSeconds)
        ]
    }

    /// A final status that leaves nothing of Apple's to keep — a rejection, a replayed notification — kept an
    /// hour, with its dedupe key.
    func brief(_ status: JobStatus, _ job: Job, partition: Partition) -> [PipelineWrite] {
        let brief = JobStatus.rejectionRetentionSeconds
        var writes = [status.write(keys: keys, partition: partition, expireSeconds: brief)]
        if let dedupeKey = job.dedupeKey { writes.append(.shortenExpiry(key: dedupeKey, seconds: brief)) }
        return writes
    }

    /// The status writes when an entry is dead-lettered (here, or by the runtime: poison, retries exhausted).
    package func deadLetterWrites(_ message: StreamMessage, _ reason: String) -> [PipelineWrite] {
        metrics.deadLetter(kind: message.entry.string(Job.Field.kind) ?? "unknown")
        let release = Job.backlogRelease(of: message.entry, keys: keys, partition: message.partition)
        guard let jobID = message.entry.string(Job.Field.id), !jobID.isEmpty else { return release }
        let code =
            reason.hasPrefix("poison")
            ? "poison"
            : reason.hasPrefix("retries exhausted") ? "retries_exhausted" : "malformed_entry"
        // The whole reason stays in the dead-letter stream, for operators; the app gets the code's sentence.
        let status = JobStatus(
            jobID: jobID, state: .dead, reason: code, message: FailureCode(rawValue: code).sentence,
            attempt: message.attempt, updatedAtMilliseconds: clock.nowMilliseconds())
        return [status.write(keys: keys, partition: message.partition)] + release
    }
}
