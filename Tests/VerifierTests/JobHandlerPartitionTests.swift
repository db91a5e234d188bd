import AppStore
import Foundation
import Pipeline
import Redis
import ServiceKit
import TestSupport
import Testing

@testable import Verification

/// The verifier's acknowledgements of a job in partition J with 16 partitions: every key each outcome writes (the
/// verified stream, the job's status, the notification marker, the backlog) is in J's slot, the one the ack
/// function's stream is in, so each ack stays one single-slot call on a Redis Cluster.
@Suite struct JobHandlerPartitionTests {
    static func writtenKeys(_ writes: [PipelineWrite]) -> [String] {
        writes.compactMap { write in
            switch write {
            case .xadd(let stream, _): return stream
            case .hset(let key, _, _), .hincrby(let key, _, _), .shortenExpiry(let key, _), .status(let key, _, _, _, _, _): return key
            case .publish: return nil
            }
        }
    }

    static func writes(_ outcome: HandlerOutcome) -> [PipelineWrite] {
        switch outcome {
        case .complete(let writes): return writes
        case .deadLetter(_, let writes): return writes
        case .retry(_, _, let writes):
            return writes(RetrySchedule(attempt: 2, delay: .seconds(1), scheduledAtMilliseconds: 1))
        default: return []
        }
    }

    @Test func everyOutcomeWritesInTheJobsPartition() async throws {
        try await VerifierHarness.with(partitions: 16) { harness in
            let configuration = try VerifierConfiguration(environment: harness.environment(try harness.apiSettings()))
            let keys = configuration.shared.keys
            #expect(keys.layout.count == 16)
            let metrics = VerifierMetrics()
            let (signedData, receipts, apiClients) = try VerifierServices.appleClients(configuration, metrics: metrics)
            // Every command the verifier's path sends must declare its keys (a Redis Cluster routes by them).
            let declared = CheckedExecutor(harness.redis, .declaredKeys)
            let verifier = JobVerifier(
                configuration: configuration, signedData: signedData, receipts: receipts, apiClients: apiClients,
                limiter: FleetRateLimiter(redis: declared), redis: declared, clock: .system, logger: harness.logger)
            let handler = JobHandler(
                verifier: verifier, redis: declared, keys: keys, group: "verifiers", consumer: "c1",
                heartbeatInterval: .seconds(5), clock: .system, metrics: metrics, logger: harness.logger)
            for partition: Partition in [5, 11] {
                let job = Job(
                    id: keys.newJobID(partition: partition), kind: .notificationV2, payload: Array("{}".utf8), source: .apple,
                    receivedAtMilliseconds: 1, countedBytes: 2, dedupeKey: keys.partitionKey(partition, "dedupe", "d"))
                var fields: [String: [UInt8]] = [:]
                for (name, value) in job.fields { fields[name] = value }
                let stream = keys.jobs(partition: partition).stream
                let message = StreamMessage(
                    stream: stream, partition: partition, entry: StreamEntry(id: "1-1", fields: fields), attempt: 1,
                    deliveryCount: 1, lastError: nil, isLastAttempt: false)
                let event = PurchaseEvent(
                    job: job, environment: "Production", verifiedAt: 1, transactions: [],
                    notification: PurchaseEventNotification(type: "DID_RENEW", notificationUUID: "uuid-\(partition)", version: 2))
                let outcomes: [VerificationOutcome] = [
                    .verified(event), .recorded(result: "{}", notificationUUID: "uuid-r-\(partition)"),
                    .rejected(VerificationFailure(.invalidFormat, "x")), .duplicate(firstJobID: "f"),
                    .retryable(VerificationFailure("apple_unavailable", "x"), retryAfter: nil),
                ]
                var all: [String] = []
                for outcome in outcomes {
                    all += Self.writtenKeys(
                        Self.writes(handler.handlerOutcome(outcome, job: job, message: message, logger: harness.logger)))
                }
                all += Self.writtenKeys(handler.deadLetterWrites(message, "poison"))
                #expect(all.contains(keys.verified(partition: partition).stream))
                #expect(all.contains(keys.backlog(partition: partition)))
                #expect(all.contains(keys.verifiedNotification(uuid: "uuid-\(partition)", partition: partition)))
                #expect(all.contains(keys.job(job.id, partition: partition)))
                let slot = ClusterKeySlot.slot(stream)
                for key in all { #expect(ClusterKeySlot.slot(key) == slot, "\(key) is not in \(stream)'s slot") }
            }
        }
    }
}
