import Foundation
import HTTPClient
import TestSupport
import Testing
import X509

@testable import AppStore

/// `TransportOCSPRequester` asks through the transport it is given: a POST of the DER request, the DER answer back,
/// anything but 200 a terminal error.
@Suite struct TransportOCSPRequesterTests {
    @Test func postsTheRequestAndReturnsTheAnswer() async throws {
        let server = try await StubHTTPServer.start()
        await server.respond(to: "/ocsp", with: [StubResponse(status: 200, body: Data([0x30, 0x03, 0x0A, 0x01, 0x00]))])
        await server.respond(to: "/down", with: [StubResponse(status: 503)])
        let requester = TransportOCSPRequester(transport: CurlTransport(), timeout: .seconds(5))

        let answer = await requester.query(request: [0x30, 0x01, 0x02], uri: server.url("/ocsp").absoluteString)
        let down = await requester.query(request: [0x30, 0x01, 0x02], uri: server.url("/down").absoluteString)
        let notHTTP = await requester.query(request: [0x30], uri: "ldap://example.com/ocsp")
        let recorded = await server.requests(to: "/ocsp")
        await server.stop()

        #expect(Self.outcome(answer).kind == "success")
        #expect(Self.outcome(answer).bytes == [0x30, 0x03, 0x0A, 0x01, 0x00])
        #expect(recorded.first?.method == "POST")
        #expect(recorded.first?.headers["content-type"] == "application/ocsp-request")
        #expect(recorded.first.map { Array($0.body) } == [0x30, 0x01, 0x02])
        #expect(Self.outcome(down).kind == "terminal")
        #expect(Self.outcome(notHTTP).kind == "terminal")
    }

    /// swift-certificates keeps the result's case internal: read it by reflection (`success`, `terminal`, …).
    static func outcome(_ result: OCSPRequesterQueryResult) -> (kind: String, bytes: [UInt8]?) {
        guard let storage = Mirror(reflecting: result).children.first?.value else { return ("", nil) }
        let child = Mirror(reflecting: storage).children.first
        return (child?.label ?? "", child?.value as? [UInt8])
    }
}
