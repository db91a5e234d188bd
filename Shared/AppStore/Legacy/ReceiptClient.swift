import Foundation
package import HTTPClient

/// Verifies app receipts with Apple's legacy `verifyReceipt` endpoint.
///
/// Production is asked first; `21007` (a sandbox receipt) leads to the sandbox endpoint when the
/// configuration allows sandbox, `21008` back to production. Every outcome is classified: `0` and
/// `21006` are verified; `21005`, `21009`, `21100`–`21199`, HTTP 5xx and 429, timeouts and connection
/// failures are retryable; every other status is a permanent rejection with a stable code and Apple's
/// meaning. A verified receipt is normalized (``ReceiptNormalizer``) and checked against the bundle ID.
///
/// The client holds one transport (one connection pool) for its whole life; share the client.
package struct ReceiptClient: Sendable {
    package let configuration: ReceiptClientConfiguration
    private let transport: any HTTPTransport

    package init(configuration: ReceiptClientConfiguration, transport: any HTTPTransport = CurlTransport()) {
        self.configuration = configuration
        self.transport = transport
    }

    /// Verifies a base64 receipt. Never throws: infrastructure failures are retryable outcomes. `gate` is asked before
    /// each call (production, then sandbox on 21007); a refusal ends the verification as retryable.
    package func verify(_ receiptData: String, gate: AppleCallGate? = nil) async -> ReceiptVerification {
        let receipt: String
        switch ReceiptData.sanitize(receiptData, maximumLength: configuration.maximumReceiptLength) {
        case .success(let cleaned): receipt = cleaned
        case .failure(let failure): return ReceiptVerification(result: .rejected(failure))
        }
        if configuration.startInSandbox && !configuration.allowSandbox {
            return ReceiptVerification(
                result: .rejected(
                    VerificationFailure(
                        .sandboxNotAllowed, "the client starts in sandbox but sandbox is not allowed")))
        }
        let body: Data
        do {
            body = try requestBody(receipt, password: configuration.sharedSecret(forReceiptOf: peekBundleIdIfNeeded(receipt)))
        } catch {
            return ReceiptVerification(result: .rejected(VerificationFailure(.invalidReceipt, "the request could not be encoded")))
        }

        var environment: AppStoreEnvironment = configuration.startInSandbox ? .sandbox : .production
        var called: [AppStoreEnvironment] = []
        while true {
            if let gate, let refusal = await gate() {
                return ReceiptVerification(result: .retryable(refusal.failure), retryAfter: refusal.retryAfter, environmentsCalled: called)
            }
            called.append(environment)
            let step = await ask(environment, body: body)
            switch step {
            case .finished(var verification):
                verification.environmentsCalled = called
                return verification
            case .redirect(let next):
                if next == .sandbox && !configuration.allowSandbox {
                    return ReceiptVerification(
                        result: .rejected(
                            VerificationFailure(
                                .sandboxNotAllowed,
                                "Apple status 21007: this is a sandbox receipt and sandbox receipts are not accepted")),
                        environmentsCalled: called)
                }
                if called.contains(next) {
                    return ReceiptVerification(
                        result: .rejected(
                            VerificationFailure(
                                .wrongEnvironment, "Apple sent the receipt back and forth between production and sandbox")),
                        environmentsCalled: called)
                }
                environment = next
            }
        }
    }

    private enum Step {
        case finished(ReceiptVerification)
        case redirect(AppStoreEnvironment)
    }

    /// One call to one endpoint, classified.
    private func ask(_ environment: AppStoreEnvironment, body: Data) async -> Step {
        let url = environment == .sandbox ? configuration.sandboxURL : configuration.productionURL
        let request = HTTPTransportRequest(
            method: .post, url: url,
            headers: ["Content-Type": "application/json", "Accept": "application/json"],
            body: body, timeout: configuration.timeout)
        let response: HTTPTransportResponse
        do {
            response = try await transport.send(request)
        } catch let error as HTTPTransportError {
            return .finished(ReceiptVerification(result: .retryable(Self.failure(for: error, environment: environment))))
        } catch {
            return .finished(
                ReceiptVerification(
                    result: .retryable(
                        VerificationFailure(
                            .appleUnreachable, "verifyReceipt (\(environment)) failed: \(error)"))))
        }
        if let failure = Self.httpFailure(response, environment: environment) {
            return .finished(ReceiptVerification(result: .retryable(failure), retryAfter: response.retryAfter()))
        }
        guard let decoded = try? VerifyReceiptResponse.read(Array(response.body)) else {
            return .finished(
                ReceiptVerification(
                    result: .retryable(
                        VerificationFailure(
                            .appleBadResponse, "verifyReceipt (\(environment)) answered with a body that is not a receipt response"))))
        }
        switch decoded.status {
        case ReceiptStatus.valid, ReceiptStatus.subscriptionExpired:
            let result = ReceiptNormalizer.normalize(
                response: decoded, answeredBy: environment, expectedBundleId: configuration.bundleId,
                alsoAccepted: configuration.additionalApps.map(\.bundleId))
            return .finished(ReceiptVerification(result: result))
        case ReceiptStatus.sandboxReceipt:
            return .redirect(.sandbox)
        case ReceiptStatus.productionReceipt:
            return .redirect(.production)
        default:
            switch ReceiptStatus.treatment(of: decoded.status, isRetryable: decoded.isRetryable) {
            case .permanent(let failure): return .finished(ReceiptVerification(result: .rejected(failure)))
            case .retryable(let failure): return .finished(ReceiptVerification(result: .retryable(failure)))
            }
        }
    }

    /// The bundle ID an app receipt says it is of, read without checking its signature (Apple checks it); nil when the
    /// receipt is not an app receipt this parser reads, or when only one app is configured (nothing to choose).
    private func peekBundleIdIfNeeded(_ receipt: String) -> String? {
        configuration.additionalApps.isEmpty ? nil : Self.peekBundleId(receipt)
    }

    static func peekBundleId(_ receipt: String) -> String? {
        guard let data = Data(base64Encoded: receipt) else { return nil }
        return try? AppReceiptParser.parse(Array(data)).bundleId
    }

    private func requestBody(_ receipt: String, password: String?) throws -> Data {
        struct Body: Encodable {
            var receiptData: String
            var password: String?
            var excludeOldTransactions: Bool

            enum CodingKeys: String, CodingKey {
                case receiptData = "receipt-data"
                case password
                case excludeOldTransactions = "exclude-old-transactions"
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try encoder.encode(
            Body(
                receiptData: receipt, password: password,
                excludeOldTransactions: configuration.excludeOldTransactions))
    }

    static func failure(for error: HTTPTransportError, environment: AppStoreEnvironment) -> VerificationFailure {
        switch error.code {
        case .timeout:
            return VerificationFailure(.appleTimeout, "verifyReceipt (\(environment)) timed out: \(error.message)")
        case .connectionFailed, .tlsFailed:
            return VerificationFailure(.appleUnreachable, "verifyReceipt (\(environment)) unreachable: \(error.message)")
        case .invalidResponse, .failed:
            return VerificationFailure(.appleBadResponse, "verifyReceipt (\(environment)) failed: \(error.message)")
        }
    }

    /// A retryable failure for any HTTP status but 200.
    static func httpFailure(_ response: HTTPTransportResponse, environment: AppStoreEnvironment) -> VerificationFailure? {
        switch response.status {
        case 200:
            return nil
        case 429:
            return VerificationFailure(.appleRateLimited, "verifyReceipt (\(environment)) answered HTTP 429 Too Many Requests")
        case 500...599:
            return VerificationFailure(.appleUnavailable, "verifyReceipt (\(environment)) answered HTTP \(response.status)")
        default:
            return VerificationFailure(.appleBadResponse, "verifyReceipt (\(environment)) answered HTTP \(response.status)")
        }
    }
}
