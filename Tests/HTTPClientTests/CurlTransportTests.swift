import Foundation
import TestSupport
import Testing

@testable import HTTPClient

/// What `CurlTransport` promises beyond every transport's behaviours (those run in `HTTPTransportTests`): many
/// requests in flight on one thread, connections reused, an exact deadline, a size cap, no `100-continue` waits.
@Suite struct CurlTransportTests {
    func withServer(
        _ transport: CurlTransport = CurlTransport(), _ body: (StubHTTPServer, CurlTransport) async throws -> Void
    ) async throws {
        let server = try await StubHTTPServer.start()
        do {
            try await body(server, transport)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func sixtyFourConcurrentRequestsAllGetTheirOwnAnswer() async throws {
        try await withServer { server, transport in
            await server.respond(to: "/echo") { request in
                StubResponse(status: 200, body: Data("answer to \(request.query ?? "")".utf8), delay: .milliseconds(20))
            }
            let url = server.url("/echo")
            let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<64 {
                    group.addTask {
                        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
                        components?.query = "n=\(index)"
                        let target = try #require(components?.url)
                        let response = try await transport.send(HTTPTransportRequest(method: .get, url: target, timeout: .seconds(30)))
                        #expect(response.status == 200)
                        return (index, String(decoding: response.body, as: UTF8.self))
                    }
                }
                return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
            }
            #expect(answers.count == 64)
            for index in 0..<64 {
                #expect(answers[index] == "answer to n=\(index)")
            }
        }
    }

    @Test func fiftySequentialRequestsUseOneConnection() async throws {
        try await withServer { server, transport in
            await server.respond(to: "/ping", with: [.json(#"{"ok":true}"#)])
            for _ in 0..<50 {
                let response = try await transport.send(HTTPTransportRequest(method: .post, url: server.url("/ping"), body: Data("x".utf8)))
                #expect(response.status == 200)
            }
            let ports = await server.requests(to: "/ping").compactMap(\.remotePort)
            #expect(ports.count == 50)
            #expect(Set(ports).count == 1, "one connection for 50 sequential requests: \(Set(ports))")
        }
    }

    @Test func burstsReuseTheirConnections() async throws {
        try await withServer(CurlTransport(maximumConnectionsPerHost: 4)) { server, transport in
            await server.respond(to: "/ping", with: [StubResponse(status: 200, delay: .milliseconds(5))])
            let url = server.url("/ping")
            for _ in 0..<3 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<16 {
                        group.addTask { _ = try await transport.send(HTTPTransportRequest(method: .get, url: url)) }
                    }
                    try await group.waitForAll()
                }
            }
            let ports = Set(await server.requests(to: "/ping").compactMap(\.remotePort))
            #expect(!ports.isEmpty && ports.count <= 4, "at most 4 connections for 48 requests: \(ports.count)")
        }
    }

    @Test func timesOutAtItsDeadline() async throws {
        try await withServer { server, transport in
            await server.respond(to: "/slow", with: [StubResponse(status: 200, delay: .milliseconds(3000))])
            let started = ContinuousClock.now
            let error = await HTTPTransportTests.transportError {
                _ = try await transport.send(HTTPTransportRequest(method: .get, url: server.url("/slow"), timeout: .milliseconds(300)))
            }
            let elapsed = ContinuousClock.now - started
            #expect(error?.code == .timeout)
            // The server answers after 3 s: ending well before that is the deadline's doing (a wide bound, so a
            // loaded machine cannot fail it).
            #expect(elapsed >= .milliseconds(300) && elapsed < .milliseconds(2500), "\(elapsed)")
        }
    }

    @Test func aResponseOverTheLimitIsInvalid() async throws {
        try await withServer(CurlTransport(maximumBodySize: 64 << 10)) { server, transport in
            await server.respond(to: "/small", with: [StubResponse(status: 200, body: Data(repeating: 0x61, count: 32 << 10))])
            await server.respond(to: "/large", with: [StubResponse(status: 200, body: Data(repeating: 0x61, count: 128 << 10))])
            let small = try await transport.send(HTTPTransportRequest(method: .get, url: server.url("/small")))
            #expect(small.body.count == 32 << 10)
            let error = await HTTPTransportTests.transportError {
                _ = try await transport.send(HTTPTransportRequest(method: .get, url: server.url("/large")))
            }
            #expect(error?.code == .invalidResponse)
        }
    }

    @Test func aLargeBodyIsSentWithoutWaitingForContinue() async throws {
        try await withServer { server, transport in
            await server.respond(to: "/upload", with: [.json("{}")])
            let body = Data((0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let started = ContinuousClock.now
            let response = try await transport.send(
                HTTPTransportRequest(method: .post, url: server.url("/upload"), headers: ["Content-Type": "application/json"], body: body))
            #expect(response.status == 200)
            // libcurl would send `Expect: 100-continue` and wait up to 1 s for an answer; the header's absence is
            // the proof (a time bound alone fails on a loaded machine), the bound only catches a hang.
            #expect(ContinuousClock.now - started < .seconds(5))
            let request = try #require(await server.requests(to: "/upload").first)
            #expect(request.body == body)
            #expect(request.headers["expect"] == nil)
        }
    }

    @Test func aCancelledRequestLeavesTheTransportUsable() async throws {
        try await withServer { server, transport in
            await server.respond(to: "/slow", with: [StubResponse(status: 200, delay: .seconds(3))])
            await server.respond(to: "/ping", with: [.json("{}")])
            let slow = server.url("/slow")
            let tasks = (0..<8).map { _ in Task { try await transport.send(HTTPTransportRequest(method: .get, url: slow)) } }
            try await Task.sleep(for: .milliseconds(100))
            for task in tasks { task.cancel() }
            for task in tasks {
                await #expect(throws: CancellationError.self) { _ = try await task.value }
            }
            let response = try await transport.send(HTTPTransportRequest(method: .get, url: server.url("/ping"), timeout: .seconds(30)))
            #expect(response.status == 200)
        }
    }

    @Test func aHeaderWithALineBreakIsRefused() async throws {
        try await withServer { server, transport in
            let error = await HTTPTransportTests.transportError {
                _ = try await transport.send(
                    HTTPTransportRequest(method: .get, url: server.url("/x"), headers: ["X-Evil": "a\r\nInjected: yes"]))
            }
            #expect(error?.code == .failed)
            #expect(await server.allRequests().isEmpty)
        }
    }
}
