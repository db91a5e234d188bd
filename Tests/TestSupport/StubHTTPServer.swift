package import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServiceLifecycle

/// A small local HTTP server for tests that stands in for Apple: it binds `127.0.0.1` on a free port,
/// answers each path with scripted responses (in order, the last one repeating) or a handler, and records
/// every request it receives. Unscripted paths answer `404`.
///
/// ```swift
/// try await withStubServer { server in
///     await server.respond(to: "/verifyReceipt", with: [.json(#"{"status": 0}"#)])
///     …
/// }
/// ```
package final class StubHTTPServer: Sendable {
    /// The port the server listens on.
    package let port: Int
    private let routes: StubRoutes
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, routes: StubRoutes, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.routes = routes
        self.group = group
        self.task = task
    }

    /// Starts a server on `127.0.0.1` and a port chosen by the kernel.
    package static func start() async throws -> StubHTTPServer {
        let routes = StubRoutes()
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let responder = CallbackResponder<StubRequestContext> { request, context in
            try await routes.respond(to: request, remotePort: context.remotePort)
        }
        var logger = Logger(label: "stub-http-server")
        logger.logLevel = .critical
        let app = Application(
            responder: responder,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            await group.triggerGracefulShutdown()
            throw StubHTTPServerError(message: "the stub server did not start")
        }
        return StubHTTPServer(port: port, routes: routes, group: group, task: task)
    }

    /// Stops the server (gracefully: requests in progress are answered) and waits until it has closed its
    /// socket.
    package func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// `http://127.0.0.1:<port><path>`.
    package func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// Answers requests to `path` (any method, any query) with `responses` in order; the last repeats.
    package func respond(to path: String, with responses: [StubResponse]) async {
        await routes.set(path, .queue(responses))
    }

    /// Answers requests to `path` with whatever `handler` returns for each one.
    package func respond(to path: String, handler: @escaping @Sendable (StubRecordedRequest) -> StubResponse) async {
        await routes.set(path, .handler(handler))
    }

    /// The requests received for `path`, oldest first.
    package func requests(to path: String) async -> [StubRecordedRequest] {
        await routes.recorded.filter { $0.path == path }
    }

    /// Every request received, oldest first.
    package func allRequests() async -> [StubRecordedRequest] {
        await routes.recorded
    }

    /// A URL on `127.0.0.1` where nothing listens (a server was started there and stopped).
    package static func closedPortURL(path: String = "/") async throws -> URL {
        let server = try await start()
        let url = server.url(path)
        await server.stop()
        return url
    }
}

/// The stub server failed to start.
package struct StubHTTPServerError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// The scripted routes and the request log of one ``StubHTTPServer``.
actor StubRoutes {
    enum Script {
        case queue([StubResponse])
        case handler(@Sendable (StubRecordedRequest) -> StubResponse)
    }

    private var scripts: [String: Script] = [:]
    private var served: [String: Int] = [:]
    private(set) var recorded: [StubRecordedRequest] = []

    func set(_ path: String, _ script: Script) {
        scripts[path] = script
        served[path] = 0
    }

    func respond(to request: Request, remotePort: Int?) async throws -> Response {
        var body = try await request.body.collect(upTo: 32 << 20)
        var headers: [String: String] = [:]
        for field in request.headers {
            headers[field.name.canonicalName] = field.value
        }
        let recordedRequest = StubRecordedRequest(
            method: request.method.rawValue,
            path: request.uri.path,
            query: request.uri.query,
            headers: headers,
            remotePort: remotePort,
            body: Data(body.readBytes(length: body.readableBytes) ?? [])
        )
        let reply = next(for: recordedRequest)
        if let delay = reply.delay {
            try? await Task.sleep(for: delay)
        }
        var fields = HTTPFields()
        for (name, value) in reply.headers {
            if let fieldName = HTTPField.Name(name) { fields[fieldName] = value }
        }
        return Response(
            status: .init(code: reply.status),
            headers: fields,
            body: .init(byteBuffer: ByteBuffer(bytes: reply.body))
        )
    }

    private func next(for request: StubRecordedRequest) -> StubResponse {
        recorded.append(request)
        switch scripts[request.path] {
        case .none:
            return StubResponse(status: 404, body: Data("no stub for \(request.path)".utf8))
        case .handler(let handler):
            return handler(request)
        case .queue(let responses):
            let index = served[request.path, default: 0]
            served[request.path] = index + 1
            guard let last = responses.last else { return StubResponse(status: 404) }
            return index < responses.count ? responses[index] : last
        }
    }
}
