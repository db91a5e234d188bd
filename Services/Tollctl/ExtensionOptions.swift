import AppStore
import ArgumentParser
import Foundation
import Logging
import Pipeline
import ServiceKit
import Verification

/// Options every Apple extension command shares.
struct ExtensionOptions: ParsableArguments {
    @Option(help: "Days to add to the renewal date (1-90).")
    var days: Int

    @Option(help: "Why: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.")
    var reason: Int = 0

    @Option(name: .customLong("request-id"), help: "The request's UUID (default: a new one); the same UUID again is the same request.")
    var requestID: String?

    func validate() throws {
        guard (1...90).contains(days) else { throw ValidationError("--days must be 1-90") }
        guard (0...3).contains(reason) else { throw ValidationError("--reason must be 0-3") }
        if let requestID, UUID(uuidString: requestID) == nil { throw ValidationError("--request-id must be a UUID") }
    }

    var identifier: String { (requestID ?? UUID().uuidString).lowercased() }
}

func verifierConfiguration() throws -> VerifierConfiguration {
    let configuration = try VerifierConfiguration(environment: ProcessInfo.processInfo.environment)
    configuration.shared.bootstrapLogging(ceiling: .warning)
    return configuration
}

/// Runs `body` with the verifier's Apple clients and a Redis connection (`TOLLGATE_REDIS_URL`): every call the command
/// makes to Apple takes its app's fleet-wide token first, as the verifier's own calls do (``OperatorAPI``), waiting up
/// to 30 s (`rate_limited` past it).
func withOperatorAPI<T>(_ name: String, _ body: (OperatorAPI) async throws -> T) async throws -> T {
    try await OperatorAPI.withTool(
        try verifierConfiguration(), clientName: "tollctl-\(name)", logger: Logger(label: "tollctl.\(name)"), body)
}

func parsedEnvironment(_ text: String) throws -> AppStoreEnvironment {
    let environment = AppStoreEnvironment(rawValue: text.capitalized)
    guard environment == .production || environment == .sandbox else {
        throw ValidationError("--environment must be production or sandbox")
    }
    return environment
}

/// A date of Apple's answer (ms), or `-`.
func answerDate(_ milliseconds: Int64?) -> String {
    guard let milliseconds else { return "-" }
    return ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
}
