import Foundation
import Synchronization
import TestSupport
import Testing

@testable import AppStore

/// `ReceiptClient` against a local stub standing in for Apple's two `verifyReceipt` endpoints.
@Suite struct ReceiptClientTests {
    static let production = "/production/verifyReceipt"
    static let sandbox = "/sandbox/verifyReceipt"
    static let receipt = "QUJD+/8="

    func withStub(
        allowSandbox: Bool = true,
        startInSandbox: Bool = false,
        bundleId: String = "com.foo.foo",
        timeout: Duration = .seconds(5),
        _ body: (StubHTTPServer, ReceiptClient) async throws -> Void
    ) async throws {
        let server = try await StubHTTPServer.start()
        let client = ReceiptClient(
            configuration: ReceiptClientConfiguration(
                bundleId: bundleId, sharedSecret: "s3cret",
                productionURL: server.url(Self.production), sandboxURL: server.url(Self.sandbox),
                allowSandbox: allowSandbox, startInSandbox: startInSandbox, excludeOldTransactions: true,
                timeout: timeout))
        do {
            try await body(server, client)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func status(_ status: Int, retryable: Bool? = nil) -> StubResponse {
        if let retryable {
            return .json(#"{"status": \#(status), "is-retryable": \#(retryable)}"#)
        }
        return .json(#"{"status": \#(status)}"#)
    }

    @Test func validReceiptIsVerifiedByProduction() async throws {
        try await withStub { server, client in
            await server.respond(to: Self.production, with: [.json(try LegacyFixture.text(LegacyFixture.ios7))])
            let outcome = await client.verify(Self.receipt)
            let verified = try #require(outcome.result.value)
            #expect(verified.environment == .production)
            #expect(verified.transactions.count == 8)
            #expect(outcome.environmentsCalled == [.production])
            let request = try #require(await server.requests(to: Self.production).first)
            #expect(request.method == "POST")
            #expect(request.headers["content-type"] == "application/json")
            let body = try #require(request.jsonBody())
            #expect(body["receipt-data"]?.string == Self.receipt)
            #expect(body["password"]?.string == "s3cret")
            #expect(body["exclude-old-transactions"]?.bool == true)
            #expect(await server.requests(to: Self.sandbox).isEmpty)
        }
    }

    @Test func expiredSubscriptionStatusIsVerified() async throws {
        try await withStub(bundleId: "com.huochai.main") { server, client in
            let body = try LegacyFixture.text(LegacyFixture.ios6).replacingOccurrences(of: #""status":0"#, with: #""status":21006"#)
            await server.respond(to: Self.production, with: [.json(body)])
            let verified = try #require(await client.verify(Self.receipt).result.value)
            #expect(verified.isSubscriptionExpired)
            #expect(verified.transactions.map(\.transactionId) == ["1000000859439868"])
        }
    }

    @Test func spacesAndLineBreaksInTheReceiptAreRepaired() async throws {
        try await withStub { server, client in
            await server.respond(to: Self.production, with: [.json(try LegacyFixture.text(LegacyFixture.ios7))])
            _ = await client.verify(" QUJD /8=\n")
            let body = try #require(await server.requests(to: Self.production).first?.jsonBody())
            #expect(body["receipt-data"]?.string == "QUJD+/8=")
        }
    }

    @Test func nonBase64ReceiptIsRejectedWithoutCallingApple() async throws {
        try await withStub { server, client in
            let outcome = await client.verify("not a receipt!")
            #expect(outcome.result.failure?.code == .invalidReceipt)
            if case .rejected = outcome.result {} else { Issue.record("expected a rejection") }
            #expect(await server.allRequests().isEmpty)
        }
    }

    @Test func sandboxReceiptGoesToSandbox() async throws {
        try await withStub { server, client in
            await server.respond(to: Self.production, with: [Self.status(21007)])
            await server.respond(to: Self.sandbox, with: [.json(try LegacyFixture.text(LegacyFixture.ios7))])
            let outcome = await client.verify(Self.receipt)
            let verified = try #require(outcome.result.value)
            #expect(verified.environment == .sandbox)
            #expect(verified.transactions.allSatisfy { $0.environment == .sandbox })
            #expect(outcome.environmentsCalled == [.production, .sandbox])
            #expect(await server.requests(to: Self.production).count == 1)
            #expect(await server.requests(to: Self.sandbox).count == 1)
        }
    }

    /// Issue 29 item 3: the gate is asked before each call (production, then sandbox after 21007); its refusal ends
    /// the verification, retryable with its delay, before the call is made.
    @Test func theGateIsAskedBeforeEachCallAndItsRefusalStopsTheCall() async throws {
        try await withStub { server, client in
            await server.respond(to: Self.production, with: [Self.status(21007)])
            await server.respond(to: Self.sandbox, with: [.json(try LegacyFixture.text(LegacyFixture.ios7))])
            let passes = Counter(1)
            let outcome = await client.verify(Self.receipt) {
                guard passes.take() else {
                    return AppleCallRefusal(VerificationFailure(.userAppleBudgetSpent, "spent"), retryAfter: .seconds(7))
                }
                return nil
            }
            guard case .retryable(let failure) = outcome.result else {
                Issue.record("not retryable: \(outcome.result)")
                return
            }
            #expect(failure.code == .userAppleBudgetSpent)
            #expect(outcome.retryAfter == .seconds(7))
            #expect(outcome.environmentsCalled == [.production])
            #expect(await server.requests(to: Self.production).count == 1)
            #expect(await server.requests(to: Self.sandbox).isEmpty)
        }
    }

    /// Passes handed out by a gate in tests.
    final class Counter: Sendable {
        private let left: Mutex<Int>
        init(_ passes: Int) { left = Mutex(passes) }
        func take() -> Bool {
            left.withLock { left in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
        }
    }

    @Test func sandboxReceiptIsRejectedWhenSandboxIsNotAllowed() async throws {
        try await withStub(allowSandbox: false) { server, client in
            await server.respond(to: Self.production, with: [Self.status(21007)])
            let outcome = await client.verify(Self.receipt)
            guard case .rejected(let failure) = outcome.result else {
                Issue.record("expected a rejection, got \(outcome.result)")
                return
            }
            #expect(failure.code == .sandboxNotAllowed)
            #expect(await server.requests(to: Self.sandbox).isEmpty)
        }
    }

    @Test func productionReceiptSentToSandboxGoesToProduction() async throws {
        try await withStub(startInSandbox: true) { server, client in
            await server.respond(to: Self.sandbox, with: [Self.status(21008)])
            await server.respond(to: Self.production, with: [.json(try LegacyFixture.text(LegacyFixture.ios7))])
            let outcome = await client.verify(Self.receipt)
            #expect(outcome.result.value?.environment == .production)
            #expect(outcome.environmentsCalled == [.sandbox, .production])
            #expect(await server.requests(to: Self.sandbox).count == 1)
            #expect(await server.requests(to: Self.production).count == 1)
        }
    }

    @Test func startingInSandboxRequiresSandboxToBeAllowed() async throws {
        try await withStub(allowSandbox: false, startInSandbox: true) { server, client in
            let outcome = await client.verify(Self.receipt)
            #expect(outcome.result.failure?.code == .sandboxNotAllowed)
            #expect(await server.allRequests().isEmpty)
        }
    }

    @Test func endpointsThatBounceTheReceiptAreRejected() async throws {
        try await withStub { server, client in
            await server.respond(to: Self.production, with: [Self.status(21007)])
            await server.respond(to: Self.sandbox, with: [Self.status(21008)])
            let outcome = await client.verify(Self.receipt)
            #expect(outcome.result.failure?.code == .wrongEnvironment)
            #expect(await server.allRequests().count == 2)
        }
    }

    @Test(arguments: [
        (21005, FailureCode.appleUnavailable),
        (21009, FailureCode.appleUnavailable),
        (21100, FailureCode.appleUnavailable),
        (21199, FailureCode.appleUnavailable),
    ])
    func temporaryStatusesAreRetryable(status: Int, code: FailureCode) async throws {
        try await withStub { server, client in
            await server.respond(to: Self.production, with: [Self.status(status)])
            let outcome = await client.verify(Self.receipt)
            guard case .retryable(let failure) = outcome.result else {
                Issue.record("expected retryable for \(status), got \(outcome.result)")
                return
            }
            #expect(failure.code == code)
            #expect(failure.message.contains("\(status)"))
        }
    }

    @Test(arguments: [
        (21000, FailureCode.receiptRequestInvalid),
        (21002, FailureCode.receiptMalformed),
        (21003, FailureCode.receiptNotAuthentic),
        (21004, FailureCode.sharedSecretMismatch),
        (21010, FailureCode.receiptUnauthorized),
        (21042, FailureCode.receiptRejected),
    ])
    func permanentStatusesAreRejected(status: Int, code: FailureCode) async throws {
        try await withStub { server, client in
            await server.respond(to: Self.production, with: [Self.status(status)])
            let outcome = await client.verify(Self.receipt)
            guard case .rejected(let failure) = outcome.result else {
                Issue.record("expected a rejection for \(status), got \(outcome.result)")
                return
            }
            #expect(failure.code == code)
            #expect(failure.message.contains(ReceiptStatus.meaning(of: status)))
        }
    }

    @Test func appleSaysRetryableMakesAnyStatusRetryable() async throws {
        try await withStub { server, client in
            await server.respond(to: Self.production, with: [Self.status(21002, retryable: true)])
            let outcome = await client.verify(Self.receipt)
            guard case .retryable(let failure) = outcome.result else {
                Issue.record("expected retryable, got \(outcome.result)")
                return
            }
            #expect(failure.code == .appleUnavailable)
        }
    }
}
