import Logging
import Redis

extension StreamConsumer {
    /// Handles one entry end to end; never throws, so one bad entry cannot stop the consumer.
    func process(_ entry: StreamEntry, deliveryCount: Int, from stream: PartitionStream) async {
        let attempt = entry.string(PipelineFunctions.attemptField).flatMap { Int($0) }.map { max(1, $0) } ?? 1
        let message = StreamMessage(
            stream: stream.keys.stream,
            partition: stream.partition,
            entry: entry,
            attempt: attempt,
            deliveryCount: deliveryCount,
            lastError: entry.string(PipelineFunctions.errorField),
            isLastAttempt: attempt >= configuration.retry.maxAttempts
        )
        // Built only for a line that is logged: none is on the usual path.
        func entryLogger() -> Logger {
            var logger = logger
            logger[metadataKey: "stream"] = "\(stream.keys.stream)"
            logger[metadataKey: "entry.id"] = "\(entry.id)"
            logger[metadataKey: "attempt"] = "\(attempt)"
            return logger
        }

        if deliveryCount > configuration.maxDeliveries && !configuration.sharesStream {
            let reason = "poison: delivered \(deliveryCount) times (max \(configuration.maxDeliveries))"
            entryLogger().warning("Poison entry; dead-lettering without handling", metadata: ["delivery_count": "\(deliveryCount)"])
            await apply(
                .deadLetter(reason: reason, writes: deadLetterWrites(message, reason)),
                to: message, keys: stream.keys, cause: "poison", logger: entryLogger())
            return
        }

        let started = ContinuousClock.now
        let outcome: HandlerOutcome
        do {
            outcome = try await handler(message)
        } catch is CancellationError {
            outcome = .abandon
        } catch {
            entryLogger().warning("Handler failed; scheduling a retry", metadata: ["error": "\(error)"])
            outcome = .retry(reason: "handler error: \(error)")
        }
        PipelineMetrics(stream: stream.keys.stream, handles: metrics).handlerDuration(ContinuousClock.now - started)
        await apply(outcome, to: message, keys: stream.keys, cause: "handler", logger: entryLogger())
    }

    /// Applies an outcome through the pipeline functions (ack and writes in one atomic step) on `keys`, the
    /// stream the message came from.
    func apply(
        _ outcome: HandlerOutcome, to message: StreamMessage, keys: StreamKeys, cause: String,
        logger: @autoclosure () -> Logger
    ) async {
        let metrics = PipelineMetrics(stream: keys.stream, handles: self.metrics)
        let group = configuration.group
        let id = message.entry.id
        if configuration.sharesStream {
            await applyShared(outcome, to: message, keys: keys, metrics: metrics, logger: logger())
            return
        }
        do {
            switch outcome {
            case .complete(let writes):
                let applied = try await PipelineFunctions.ackWrite(
                    on: redis, stream: keys.stream, group: group, id: id, writes: writes
                )
                metrics.job(applied ? "completed" : "duplicate")
                if !applied { logger().info("Completion refused: entry already acknowledged elsewhere") }

            case .retry(let reason, let notBefore, let writes):
                guard message.attempt < configuration.retry.maxAttempts else {
                    let final = "retries exhausted after \(message.attempt) attempts: \(reason)"
                    await apply(
                        .deadLetter(reason: final, writes: deadLetterWrites(message, final)),
                        to: message, keys: keys, cause: "exhausted", logger: logger())
                    return
                }
                var delay = configuration.retry.delay(afterAttempt: message.attempt, unitRandom: clock.unitRandom())
                if let notBefore, notBefore > delay { delay = notBefore }
                let schedule = RetrySchedule(attempt: message.attempt + 1, delay: delay, scheduledAtMilliseconds: clock.nowMilliseconds())
                let applied = try await PipelineFunctions.ackRetry(
                    on: redis, stream: keys, group: group, id: id, dueMilliseconds: schedule.dueMilliseconds,
                    nextAttempt: schedule.attempt, error: reason, writes: writes(schedule)
                )
                metrics.job(applied ? "retried" : "duplicate")
                if applied {
                    metrics.retryScheduled()
                    logger().info(
                        "Retry scheduled",
                        metadata: [
                            "delay_ms": "\(delay.milliseconds)", "next.at": "\(schedule.dueMilliseconds)",
                            "reason": "\(reason.prefix(200))",
                        ])
                }

            case .deadLetter(let reason, let writes):
                let applied = try await PipelineFunctions.ackDeadLetter(
                    on: redis, stream: keys, group: group, id: id, reason: reason,
                    attempts: message.attempt, deadAtMilliseconds: clock.nowMilliseconds(), writes: writes
                )
                metrics.job(applied ? (cause == "poison" ? "poison" : "dead_lettered") : "duplicate")
                if applied {
                    metrics.deadLetter(cause: cause)
                    logger().warning("Entry dead-lettered", metadata: ["cause": "\(cause)"])
                }

            case .abandon:
                metrics.job("abandoned")

            case .acknowledged(let duplicate):
                metrics.job(duplicate ? "duplicate" : "completed")
            }
        } catch {
            metrics.job("failed")
            logger().error("Could not apply the outcome; the entry stays pending", metadata: ["error": "\(error)"])
        }
    }

    /// An outcome on a stream other groups read too (``StreamConsumerConfiguration/sharesStream``): `XACK` only, a dead
    /// letter a copy, a retry left pending.
    private func applyShared(
        _ outcome: HandlerOutcome, to message: StreamMessage, keys: StreamKeys, metrics: PipelineMetrics, logger: Logger
    ) async {
        let reason: String?
        switch outcome {
        case .complete(let writes):
            guard writes.isEmpty else {
                metrics.job("failed")
                logger.error("A completion with writes on a shared stream; the entry stays pending")
                return
            }
            reason = nil
        case .deadLetter(let why, let writes):
            guard writes.isEmpty else {
                metrics.job("failed")
                logger.error("A dead letter with writes on a shared stream; the entry stays pending")
                return
            }
            reason = why
        case .retry(let why, _, _):
            // Nothing may be re-added to a stream others read: the entry stays pending and is claimed again.
            metrics.job("abandoned")
            logger.info("Retry left pending on a shared stream", metadata: ["reason": "\(why.prefix(200))"])
            return
        case .abandon:
            metrics.job("abandoned")
            return
        case .acknowledged(let duplicate):
            metrics.job(duplicate ? "duplicate" : "completed")
            return
        }
        do {
            let applied = try await PipelineFunctions.ackShared(
                on: redis, stream: keys, group: configuration.group, id: message.entry.id, deadLetterReason: reason,
                attempts: message.deliveryCount, deadAtMilliseconds: clock.nowMilliseconds())
            if !applied {
                metrics.job("duplicate")
            } else if let reason {
                metrics.job("dead_lettered")
                metrics.deadLetter(cause: "handler")
                logger.warning("Entry dead-lettered (copied; the stream keeps it)", metadata: ["reason": "\(reason.prefix(200))"])
            } else {
                metrics.job("completed")
            }
        } catch {
            metrics.job("failed")
            logger.error("Could not acknowledge; the entry stays pending", metadata: ["error": "\(error)"])
        }
    }
}
