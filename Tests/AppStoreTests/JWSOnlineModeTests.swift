import AppStore
import AppStoreTesting
import Foundation
import HTTPClient
import Synchronization
import Testing
import X509

/// Online mode: validation at the current time, OCSP through swift-certificates, failures to get an
/// answer reported as retryable, and proven chains re-checked after their online lifetime.
@Suite struct JWSOnlineModeTests {
    /// An OCSP transport that answers from a closure and counts queries.
    final class StubRequester: OCSPRequester {
        let answer: @Sendable () -> OCSPRequesterQueryResult
        let queries = Mutex(0)

        init(answer: @escaping @Sendable () -> OCSPRequesterQueryResult) {
            self.answer = answer
        }

        func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
            queries.withLock { $0 += 1 }
            return answer()
        }
    }

    struct Unreachable: Error {}

    static func onlineVerifier(
        roots: [Data], requester: (any OCSPRequester)?, now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            configuration: SignedDataVerifierConfiguration(
                rootCertificates: roots, bundleId: JWSTestSupport.bundleId, environment: .sandbox,
                onlineChecks: true, checksRevocation: requester != nil, ocspRequester: requester
            ), now: now)
    }

    static func authorityWithOCSP(_ url: String = "http://127.0.0.1:1/ocsp") throws -> TestCertificateAuthority {
        var options = TestCertificateAuthority.Options()
        options.ocspResponderURL = url
        return try TestCertificateAuthority().withNewLeaf(options: options)
    }

    @Test func onlineModeValidatesAtNowNotAtSignedDate() async throws {
        var options = TestCertificateAuthority.Options()
        options.leafValidity = Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 1_650_000_000)
        let authority = try TestCertificateAuthority().withNewLeaf(options: options)
        let jws = try authority.signer().sign(JWSTestSupport.transaction(signedDate: 1_620_000_000_000))
        let offline = try JWSTestSupport.verifier(roots: [authority.rootDER])
        #expect(await offline.verifyTransaction(jws).value != nil)
        let online = try Self.onlineVerifier(roots: [authority.rootDER], requester: nil)
        #expect(await online.verifyTransaction(jws).failure?.code == .certificateExpired)
    }

    @Test func unreachableResponderIsRetryable() async throws {
        let authority = try Self.authorityWithOCSP()
        let requester = TransportOCSPRequester(transport: CurlTransport(), timeout: .seconds(2))
        let verifier = try Self.onlineVerifier(roots: [authority.rootDER], requester: requester)
        let result = await verifier.verifyTransaction(try authority.signer().sign(JWSTestSupport.transaction()))
        guard case .retryable(let failure) = result else {
            Issue.record("expected retryable, got \(result)")
            return
        }
        #expect(failure.code == .retryableOCSP)
    }

    @Test func garbageOCSPAnswerIsRetryableAndNothingIsCached() async throws {
        let authority = try Self.authorityWithOCSP()
        let requester = StubRequester { .response([0x30, 0x03, 0x0A, 0x01, 0x00]) }
        let verifier = try Self.onlineVerifier(roots: [authority.rootDER], requester: requester)
        let jws = try authority.signer().sign(JWSTestSupport.transaction())
        #expect(await verifier.verifyTransaction(jws).failure?.code == .retryableOCSP)
        #expect(await verifier.verifyTransaction(jws).failure?.code == .retryableOCSP)
        #expect(requester.queries.withLock { $0 } == 2)
        #expect(verifier.chainCache.statistics.count == 0)
    }

    @Test func provenChainIsReusedOnlyForItsOnlineLifetime() async throws {
        let authority = try Self.authorityWithOCSP()
        // A non-terminal error counts as "no objection" for swift-certificates' OCSP policy.
        let requester = StubRequester { .nonTerminalError(Unreachable()) }
        let clock = Mutex(Date())
        let verifier = try Self.onlineVerifier(roots: [authority.rootDER], requester: requester) {
            clock.withLock { $0 }
        }
        let jws = try authority.signer().sign(JWSTestSupport.transaction())
        let first = await verifier.verifyTransaction(jws)
        #expect(first.value != nil, "\(String(describing: first.failure))")
        #expect(await verifier.verifyTransaction(jws).value != nil)
        #expect(requester.queries.withLock { $0 } == 1)
        clock.withLock { $0 = $0.addingTimeInterval(901) }
        #expect(await verifier.verifyTransaction(jws).value != nil)
        #expect(requester.queries.withLock { $0 } == 2)
    }

    /// A forged signature on a genuine, not yet proven chain is refused before any OCSP query: strangers cannot
    /// make Tollgate call Apple's responder.
    @Test func aForgedSignatureMakesNoOCSPQuery() async throws {
        let authority = try Self.authorityWithOCSP()
        let requester = StubRequester { .terminalError(Unreachable()) }
        let verifier = try Self.onlineVerifier(roots: [authority.rootDER], requester: requester)
        let genuine = try authority.signer().sign(JWSTestSupport.transaction(id: "1"))
        let forgedPayload = Base64URL.encode(try JSONEncoder().encode(JWSTestSupport.transaction(id: "2")))
        let forged = JWSTestSupport.replacingSegment(genuine, index: 1, with: forgedPayload)
        #expect(await verifier.verifyTransaction(forged).failure?.code == .invalidSignature)
        #expect(requester.queries.withLock { $0 } == 0)
    }
}
