import Foundation
import TestSupport
import Testing

@testable import HTTPClient

/// Each transport, `URLSessionTransport` and `CurlTransport`, against a local stub server: the behaviours every
/// ``HTTPTransport`` owes its callers. What only `CurlTransport` promises is in `CurlTransportTests`.
@Suite struct HTTPTransportTests {
    /// The transports under test.
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case urlSession
        case curl

        func make() -> any HTTPTransport {
            switch self {
            case .urlSession: URLSessionTransport()
            case .curl: CurlTransport()
            }
        }

        var testDescription: String { rawValue }
    }

    static func withServer(_ kind: Kind, _ body: (StubHTTPServer, any HTTPTransport) async throws -> Void) async throws {
        let server = try await StubHTTPServer.start()
        do {
            try await body(server, kind.make())
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func transportError(_ body: () async throws -> Void) async -> HTTPTransportError? {
        do {
            try await body()
            Issue.record("expected an HTTPTransportError")
        } catch let error as HTTPTransportError {
            return error
        } catch {
            Issue.record("expected an HTTPTransportError, got \(error)")
        }
        return nil
    }

    @Test(arguments: Kind.allCases) func sendsMethodHeadersAndBodyAndReturnsAnyStatus(kind: Kind) async throws {
        try await Self.withServer(kind) { server, transport in
            await server.respond(to: "/echo", with: [StubResponse(status: 503, headers: ["X-Reason": "busy"], body: Data("later".utf8))])
            let response = try await transport.send(
                HTTPTransportRequest(
                    method: .put, url: server.url("/echo?a=1"), headers: ["X-Custom": "yes", "Content-Type": "application/json"],
                    body: Data(#"{"k":"v"}"#.utf8), timeout: .seconds(30)))
            #expect(response.status == 503)
            #expect(response.header("x-reason") == "busy")
            #expect(response.header("X-REASON") == "busy")
            #expect(String(decoding: response.body, as: UTF8.self) == "later")
            let request = try #require(await server.requests(to: "/echo").first)
            #expect(request.method == "PUT")
            #expect(request.query == "a=1")
            #expect(request.headers["x-custom"] == "yes")
            #expect(String(decoding: request.body, as: UTF8.self) == #"{"k":"v"}"#)
        }
    }

    @Test(arguments: Kind.allCases) func keepsTheConnectionAlive(kind: Kind) async throws {
        try await Self.withServer(kind) { server, transport in
            await server.respond(to: "/ping", with: [.json("{}")])
            for _ in 0..<3 {
                _ = try await transport.send(HTTPTransportRequest(method: .get, url: server.url("/ping")))
            }
            let ports = await server.requests(to: "/ping").compactMap(\.remotePort)
            #expect(ports.count == 3)
            #expect(Set(ports).count == 1, "one connection for sequential requests: \(ports)")
        }
    }

    @Test(arguments: Kind.allCases) func slowServerTimesOutOnTime(kind: Kind) async throws {
        try await Self.withServer(kind) { server, transport in
            await server.respond(to: "/slow", with: [StubResponse(status: 200, delay: .milliseconds(5000))])
            let started = ContinuousClock.now
            let error = await Self.transportError {
                _ = try await transport.send(HTTPTransportRequest(method: .get, url: server.url("/slow"), timeout: .milliseconds(250)))
            }
            let elapsed = ContinuousClock.now - started
            #expect(error?.code == .timeout)
            #expect(elapsed >= .milliseconds(200) && elapsed < .seconds(3), "\(elapsed)")
        }
    }

    @Test(arguments: Kind.allCases) func refusedConnectionIsAConnectionFailure(kind: Kind) async throws {
        let closed = try await StubHTTPServer.closedPortURL(path: "/x")
        let error = await Self.transportError {
            _ = try await kind.make().send(HTTPTransportRequest(method: .get, url: closed, timeout: .seconds(5)))
        }
        #expect(error?.code == .connectionFailed)
    }

    @Test(arguments: Kind.allCases) func cancellationEndsTheRequest(kind: Kind) async throws {
        try await Self.withServer(kind) { server, transport in
            await server.respond(to: "/slow", with: [StubResponse(status: 200, delay: .seconds(20))])
            let url = server.url("/slow")
            let task = Task {
                try await transport.send(HTTPTransportRequest(method: .get, url: url, timeout: .seconds(30)))
            }
            try await Task.sleep(for: .milliseconds(100))
            let started = ContinuousClock.now
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
            #expect(ContinuousClock.now - started < .seconds(8))  // the answer would take 20 s
        }
    }
}
