import AppStore
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
        if let short = serviceKeys.first(where: { $0.utf8.count < 32 }) {
            throw PipelineError.invalidConfiguration(variable: "TOLLGATE_SERVICE_KEYS",
                                                     message: "every key must be at least 32 bytes (one has \(short.utf8.count))")
        }
        let reader = EnvironmentReader(environment)
        clientJWTIssuer = reader.optional("TOLLGATE_CLIENT_JWT_ISSUER")
        clientJWTAudience = reader.optional("TOLLGATE_CLIENT_JWT_AUDIENCE")
        clientJWTMaxLifetime = try reader.duration("TOLLGATE_CLIENT_JWT_MAX_LIFETIME", default: clientJWTMaxLifetime, minimum: .seconds(60))
        if try reader.bool("TOLLGATE_V1_NOTIFICATIONS", default: false) {
            guard let secret = reader.optional("TOLLGATE_SHARED_SECRET") else {
                throw PipelineError.invalidConfiguration(
                    variable: "TOLLGATE_SHARED_SECRET", message: "is required when TOLLGATE_V1_NOTIFICATIONS is on")
            }
            v1SharedSecret = secret
        }
        maxBacklog = try Self.integer(environment, "TOLLGATE_MAX_BACKLOG", default: 100_000, in: 0...Int(Int32.max))
        backlogBytesApple = try Self.budget(reader, "TOLLGATE_BACKLOG_BYTES_APPLE", default: backlogBytesApple)
        backlogBytesClient = try Self.budget(reader, "TOLLGATE_BACKLOG_BYTES_CLIENT", default: backlogBytesClient)
        userMaxInFlight = try reader.int("TOLLGATE_USER_MAX_IN_FLIGHT", default: userMaxInFlight, range: 0...10_000)
        userRatePerSecond = Double(try reader.int("TOLLGATE_USER_RATE", default: Int(userRatePerSecond), range: 1...100_000))
        userBurst = try reader.int("TOLLGATE_USER_BURST", default: userBurst, range: 1...100_000)
        maxPendingOrders = try reader.int("TOLLGATE_MAX_PENDING_ORDERS", default: maxPendingOrders, range: 1...10_000)
        orderLifetime = try reader.duration("TOLLGATE_ORDER_TTL", default: orderLifetime, minimum: .seconds(1))
        maxReceiptBytes = try reader.int("TOLLGATE_MAX_RECEIPT_BYTES", default: maxReceiptBytes, range: 1024...(1 << 20))
        maxWaiters = try reader.int("TOLLGATE_MAX_WAITERS", default: maxWaiters, range: 0...1_000_000)
        userMaxWaiters = try reader.int("TOLLGATE_USER_MAX_WAITERS", default: userMaxWaiters, range: 0...10_000)
        idleTimeout = try reader.duration("TOLLGATE_HTTP_IDLE_TIMEOUT", default: idleTimeout, minimum: .milliseconds(100))
        bodyTimeout = try reader.duration("TOLLGATE_HTTP_BODY_TIMEOUT", default: bodyTimeout, minimum: .milliseconds(100))
        if let list = reader.optional("TOLLGATE_ROOT_CERTS") {
            do {
                rootCertificates = try TrustedRootLoader.load(list: list)
            } catch {
                throw PipelineError.invalidConfiguration(variable: "TOLLGATE_ROOT_CERTS", message: error.message)
            }
        }
        opsHost = reader.optional("TOLLGATE_OPS_HOST") ?? opsHost
        if reader.optional("TOLLGATE_OPS_PORT") != nil {
            opsPort = try reader.int("TOLLGATE_OPS_PORT", default: 0, range: 0...65535)
        }
        enqueueQueueLimit = try Self.integer(environment, "TOLLGATE_ENQUEUE_QUEUE_LIMIT", default: 10_000, in: 1...1_000_000)
        enqueueBatchSize = try Self.integer(environment, "TOLLGATE_ENQUEUE_BATCH_SIZE", default: 256, in: 1...10_000)
        enqueueBatchBytes = try Self.integer(environment, "TOLLGATE_ENQUEUE_BATCH_BYTES", default: 16_384, in: 1...(64 << 20))
        enqueueRoundTrips = try Self.integer(environment, "TOLLGATE_ENQUEUE_ROUND_TRIPS", default: 64, in: 1...256)
        waitReplicas = try Self.integer(environment, "TOLLGATE_REDIS_WAIT_REPLICAS", default: 0, in: 0...100)
        waitTimeoutMilliseconds = try Self.integer(environment, "TOLLGATE_REDIS_WAIT_TIMEOUT_MS", default: 1000, in: 1...60_000)
    }

    /// A byte budget: 0 (no limit) or at least 2 MiB, so that the largest submission always fits.
    private static func budget(_ reader: EnvironmentReader, _ name: String, default value: Int) throws -> Int {
        let bytes = try reader.int(name, default: value, range: 0...Int(Int64(1) << 40))
        guard bytes == 0 || bytes >= 2 << 20 else {
            throw PipelineError.invalidConfiguration(variable: name, message: "must be 0 (no limit) or at least 2097152 bytes")
        }
        return bytes
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
