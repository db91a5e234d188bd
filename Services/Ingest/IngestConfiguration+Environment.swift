import Foundation
import Ledger
import Pipeline

extension IngestConfiguration {
    /// Reads and validates every key (see ``IngestConfiguration``); throws
    /// ``PipelineError/invalidConfiguration(variable:message:)`` naming the variable.
    public init(environment: [String: String]) throws {
        let shared = try SharedConfiguration(environment: environment)
        var catalog = try Catalog(products: [])
        if let path = environment["TOLLGATE_CATALOG"], !path.isEmpty {
            do {
                catalog = try Catalog(contentsOf: path)
            } catch {
                throw PipelineError.invalidConfiguration(variable: "TOLLGATE_CATALOG", message: error.description)
            }
        }
        self.init(shared: shared, catalog: catalog)
        var redis = self.shared.redis
        let commandTimeout = try Self.integer(environment, "TOLLGATE_REDIS_COMMAND_TIMEOUT_MS", default: 2000, in: 50...60_000)
        redis.commandTimeout = .milliseconds(commandTimeout)
        self.shared.redis = redis
        host = environment["TOLLGATE_HTTP_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        port = try Self.integer(environment, "TOLLGATE_HTTP_PORT", default: 8080, in: 0...65535)
        if let secret = environment["TOLLGATE_CLIENT_JWT_SECRET"], !secret.isEmpty {
            guard secret.utf8.count >= 32 else {
                throw PipelineError.invalidConfiguration(variable: "TOLLGATE_CLIENT_JWT_SECRET",
                                                         message: "must be at least 32 bytes (HS256)")
            }
            clientJWTSecret = secret
        }
        serviceKeys = (environment["TOLLGATE_SERVICE_KEYS"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let short = serviceKeys.first(where: { $0.utf8.count < 16 }) {
            throw PipelineError.invalidConfiguration(variable: "TOLLGATE_SERVICE_KEYS",
                                                     message: "every key must be at least 16 bytes (one has \(short.utf8.count))")
        }
        let reader = EnvironmentReader(environment)
        if try reader.bool("TOLLGATE_V1_NOTIFICATIONS", default: false) {
            guard let secret = reader.optional("TOLLGATE_SHARED_SECRET") else {
                throw PipelineError.invalidConfiguration(
                    variable: "TOLLGATE_SHARED_SECRET", message: "is required when TOLLGATE_V1_NOTIFICATIONS is on")
            }
            v1SharedSecret = secret
        }
        maxBacklog = try Self.integer(environment, "TOLLGATE_MAX_BACKLOG", default: 100_000, in: 0...Int(Int32.max))
        enqueueQueueLimit = try Self.integer(environment, "TOLLGATE_ENQUEUE_QUEUE_LIMIT", default: 10_000, in: 1...1_000_000)
        enqueueBatchSize = try Self.integer(environment, "TOLLGATE_ENQUEUE_BATCH_SIZE", default: 256, in: 1...10_000)
        enqueueBatchBytes = try Self.integer(environment, "TOLLGATE_ENQUEUE_BATCH_BYTES", default: 16_384, in: 1...(64 << 20))
        enqueueRoundTrips = try Self.integer(environment, "TOLLGATE_ENQUEUE_ROUND_TRIPS", default: 64, in: 1...256)
        waitReplicas = try Self.integer(environment, "TOLLGATE_REDIS_WAIT_REPLICAS", default: 0, in: 0...100)
        waitTimeoutMilliseconds = try Self.integer(environment, "TOLLGATE_REDIS_WAIT_TIMEOUT_MS", default: 1000, in: 1...60_000)
    }

    private static func integer(
        _ environment: [String: String], _ variable: String, default value: Int, in range: ClosedRange<Int>
    ) throws -> Int {
        guard let text = environment[variable], !text.isEmpty else { return value }
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
            throw PipelineError.invalidConfiguration(
                variable: variable, message: "'\(text)' is not an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }
}
