import Foundation
import TestSupport
import Testing

@testable import AppStore

/// `URLSessionTransport` against a local stub server.
@Suite struct HTTPTransportTests {
    func withServer(_ body: (StubHTTPServer, URLSessionTransport) async throws -> Void) async throws {
        let server = try await StubHTTPServer.start()
        do {
            try await body(server, URLSessionTransport())
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    func transportError(_ body: () async throws -> Void) async -> HTTPTransportError? {
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

    @Test func sendsMethodHeadersAndBodyAndReturnsAnyStatus() async throws {
        try await withServer { server, transport in
            await server.respond(to: "/echo", with: [StubResponse(status: 503, headers: ["X-Reason": "busy"], body: Data("later".utf8))])
            let response = try await transport.send(
                HTTPTransportRequest(
                    method: .put, url: server.url("/echo?a=1"), headers: ["X-Custom": "yes", "Content-Type": "application/json"],
                    body: Data(#"{"k":"v"}"#.utf8), timeout: .seconds(5)))
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

    @Test func keepsTheConnectionAlive() async throws {
        try await withServer { server, transport in
            await server.respond(to: "/ping", with: [.json("{}")])
            for _ in 0..<3 {
                _ = try await transport.send(HTTPTransportRequest(method: .get, url: server.url("/ping")))
            }
            let ports = await server.requests(to: "/ping").compactMap(\.remotePort)
            #expect(ports.count == 3)
            #expect(Set(ports).count == 1, "one connection for sequential requests: \(ports)")
        }
    }

    @Test func slowServerTimesOutOnTime() async throws {
        try await withServer { server, transport in
            await server.respond(to: "/slow", with: [StubResponse(status: 200, delay: .milliseconds(5000))])
            let started = ContinuousClock.now
            let error = await transportError {
                _ = try await transport.send(HTTPTransportRequest(method: .get, url: server.url("/slow"), timeout: .milliseconds(250)))
            }
            let elapsed = ContinuousClock.now - started
            #expect(error?.code == .timeout)
            #expect(elapsed >= .milliseconds(200) && elapsed < .seconds(3), "\(elapsed)")
        }
    }

    @Test func refusedConnectionIsAConnectionFailure() async throws {
        let closed = try await StubHTTPServer.closedPortURL(path: "/x")
        let error = await transportError {
            _ = try await URLSessionTransport().send(HTTPTransportRequest(method: .get, url: closed, timeout: .seconds(5)))
        }
        #expect(error?.code == .connectionFailed)
    }

    @Test func cancellationEndsTheRequest() async throws {
        try await withServer { server, transport in
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
