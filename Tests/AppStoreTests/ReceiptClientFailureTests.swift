import Foundation
import HTTPClient
import TestSupport
import Testing

@testable import AppStore

/// `ReceiptClient` when Apple's endpoint fails at the HTTP or network level.
@Suite struct ReceiptClientFailureTests {
    let receiptTests = ReceiptClientTests()

    func retryableFailure(_ outcome: ReceiptVerification) -> VerificationFailure? {
        if case .retryable(let failure) = outcome.result { return failure }
        Issue.record("expected retryable, got \(outcome.result)")
        return nil
    }

    @Test func serverErrorIsRetryable() async throws {
        try await receiptTests.withStub { server, client in
            await server.respond(to: ReceiptClientTests.production, with: [StubResponse(status: 503)])
            let outcome = await client.verify(ReceiptClientTests.receipt)
            #expect(retryableFailure(outcome)?.code == .appleUnavailable)
        }
    }

    @Test func rateLimitIsRetryableWithRetryAfter() async throws {
        try await receiptTests.withStub { server, client in
            await server.respond(to: ReceiptClientTests.production, with: [StubResponse(status: 429, headers: ["Retry-After": "42"])])
            let outcome = await client.verify(ReceiptClientTests.receipt)
            #expect(retryableFailure(outcome)?.code == .appleRateLimited)
            #expect(outcome.retryAfter == .seconds(42))
        }
    }

    @Test func slowAnswerTimesOut() async throws {
        try await receiptTests.withStub(timeout: .milliseconds(300)) { server, client in
            await server.respond(
                to: ReceiptClientTests.production,
                with: [
                    .json(try LegacyFixture.text(LegacyFixture.ios7), delay: .milliseconds(5000))
                ])
            let started = ContinuousClock.now
            let outcome = await client.verify(ReceiptClientTests.receipt)
            #expect(retryableFailure(outcome)?.code == .appleTimeout, "\(outcome.result)")
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(3), "\(elapsed)")
        }
    }

    @Test func unreachableEndpointIsRetryable() async throws {
        let closed = try await StubHTTPServer.closedPortURL(path: "/verifyReceipt")
        let client = ReceiptClient(
            configuration: ReceiptClientConfiguration(
                bundleId: "com.foo.foo", productionURL: closed, sandboxURL: closed, timeout: .seconds(5)))
        let outcome = await client.verify(ReceiptClientTests.receipt)
        #expect(retryableFailure(outcome)?.code == .appleUnreachable)
    }

    @Test func unparseableBodyIsRetryable() async throws {
        try await receiptTests.withStub { server, client in
            await server.respond(to: ReceiptClientTests.production, with: [StubResponse(status: 200, body: Data("<html>oops</html>".utf8))])
            let outcome = await client.verify(ReceiptClientTests.receipt)
            #expect(retryableFailure(outcome)?.code == .appleBadResponse)
        }
    }

    @Test func receiptOfAnotherAppIsRejected() async throws {
        try await receiptTests.withStub(bundleId: "com.example.other") { server, client in
            await server.respond(to: ReceiptClientTests.production, with: [.json(try LegacyFixture.text(LegacyFixture.ios7))])
            let outcome = await client.verify(ReceiptClientTests.receipt)
            guard case .rejected(let failure) = outcome.result else {
                Issue.record("expected a rejection, got \(outcome.result)")
                return
            }
            #expect(failure.code == .wrongBundleID)
        }
    }

    @Test func retryAfterAcceptsSecondsAndDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:14:20 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.parse("soon", now: now) == nil)
        #expect(RetryAfter.parse("-3", now: now) == nil)
    }

    /// A huge `Retry-After` (seconds, beyond Int64, or a date years away) is clamped to an hour.
    @Test func aHugeRetryAfterIsClamped() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.parse("86400000", now: now) == .seconds(3600))
        #expect(RetryAfter.parse("99999999999999999999999", now: now) == .seconds(3600))
        #expect(RetryAfter.parse("Fri, 01 Jan 2100 00:00:00 GMT", now: now) == .seconds(3600))
        #expect(RetryAfter.parse("3599", now: now) == .seconds(3599))
    }
}
