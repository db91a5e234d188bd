import AppStore
import Foundation
import Logging
import Pipeline
import Redis
import ServiceKit
import TestSupport
import Testing

@testable import Verification

/// The verifier's per-job log lines carry the job's id and kind, and the handler's own logger is left as it was.
@Suite struct JobHandlerLoggingTests {
    @Test func eachJobsLinesNameTheJobAndOnlyThatJob() async throws {
        try await VerifierHarness.with { harness in
            let configuration = try VerifierConfiguration(environment: harness.environment(try harness.apiSettings()))
            let keys = configuration.shared.keys
            let metrics = VerifierMetrics()
            let (signedData, receipts, apiClients) = try VerifierServices.appleClients(configuration, metrics: metrics)
            let verifier = JobVerifier(
                configuration: configuration, signedData: signedData, receipts: receipts, apiClients: apiClients,
                limiter: FleetRateLimiter(redis: harness.redis), redis: harness.redis, clock: .system, logger: harness.logger)
            let lines = RecordedLines()
            var logger = Logger(label: "verifier-test") { _ in RecordingLogHandler(sink: lines) }
            logger[metadataKey: "consumer"] = "c1"
            let handler = JobHandler(
                verifier: verifier, redis: harness.redis, keys: keys, group: "verifiers", consumer: "c1",
                heartbeatInterval: .seconds(5), clock: .system, metrics: metrics, logger: logger)

            var ids: [String] = []
            for n in 0..<2 {
                // A StoreKit 2 submission that is no JWS: refused locally, with one `info` line.
                let job = Job(
                    id: keys.newJobID(partition: 0), kind: .transaction, payload: Array("not a jws \(n)".utf8),
                    source: .client, userID: "u\(n)", receivedAtMilliseconds: 1, countedBytes: 11,
                    dedupeKey: keys.partitionKey(0, "dedupe", "d\(n)"))
                ids.append(job.id)
                var fields: [String: [UInt8]] = [:]
                for (name, value) in job.fields { fields[name] = value }
                let message = StreamMessage(
                    stream: keys.jobs(partition: 0).stream, partition: 0, entry: StreamEntry(id: "1-\(n)", fields: fields),
                    attempt: 1, deliveryCount: 1, lastError: nil, isLastAttempt: false)
                _ = try await handler.handle(message)
            }
            let recorded = lines.all
            #expect(recorded.count == 2, "\(recorded)")
            for (line, id) in zip(recorded, ids) {
                #expect(line.message == "Job rejected", "\(line)")
                #expect(line.metadata["job.id"] == .string(id), "\(line)")
                #expect(line.metadata["job.kind"] == .string("transaction"), "\(line)")
                #expect(line.metadata["consumer"] == .string("c1"), "the logger's own metadata stays: \(line)")
                #expect(line.metadata["reason"] != nil, "\(line)")
            }
            #expect(handler.logger[metadataKey: "job.id"] == nil, "the handler's own logger gains no job's metadata")
        }
    }
}
