import Core
import Ledger
import Logging
import Pipeline
import Redis

/// Handles one verified-stream entry: applies it through the ledger function, which acks the entry itself
/// (so the runtime's outcome is `.acknowledged`: nothing left for it to do). Unreadable events are dead-lettered
/// with the job marked `dead`; Redis faults throw, and the runtime schedules a retry.
struct FulfillerHandler: Sendable {
    let applier: LedgerApplier
    let keys: Keys
    let metrics: FulfillerMetrics
    let logger: Logger

    func handle(_ message: StreamMessage) async throws -> HandlerOutcome {
        let started = ContinuousClock.now
        let outcome: LedgerOutcome
        do {
            outcome = try await applier.apply(entry: message.entry, partition: message.partition)
        } catch let error as LedgerError {
            guard case .malformedEvent = error else { throw error }
            metrics.malformed()
            logger.warning("Malformed purchase event; dead-lettering", metadata: ["error": "\(error.description)"])
            let reason = "\(error.code): \(error.description)"
            return .deadLetter(reason: reason, writes: deadLetterWrites(message, reason))
        }
        metrics.record(outcome, duration: ContinuousClock.now - started)
        if outcome.outcome == .rejected {
            logger.info(
                "Event rejected",
                metadata: [
                    "job.id": "\(message.entry.string(PurchaseEvent.jobIDField) ?? "")",
                    "reason": "\(outcome.reason ?? "")",
                ])
        }
        return .acknowledged(duplicate: outcome.outcome == .ackedElsewhere)
    }

    /// The job status `dead` (when the entry names its job), written when the entry is dead-lettered: in the job hash
    /// of the entry's partition, which the dead-letter call touches (an entry handed over to its owner's partition
    /// has its status there).
    func deadLetterWrites(_ message: StreamMessage, _ reason: String) -> [PipelineWrite] {
        guard let jobID = message.entry.string(PurchaseEvent.jobIDField), !jobID.isEmpty else { return [] }
        // The whole reason stays in the dead-letter stream, for operators; the app gets the code's sentence.
        let status = JobStatus(
            jobID: jobID, state: .dead, reason: "fulfillment_failed",
            message: "The purchase could not be applied to the ledger; an operator can look into it and retry it.",
            updatedAtMilliseconds: applier.now())
        return [status.write(keys: keys, partition: message.partition)]
    }
}
