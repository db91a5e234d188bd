import Core
package import Hummingbird
package import Logging
import NIOCore
import Pipeline
package import Redis
package import ServiceLifecycle

/// The operators' endpoints, built the same way for every service (ingest, verifier, fulfiller):
///
/// - `GET /healthz`: the process answers, `200 {"status":"ok"}`. Touches nothing else.
/// - `GET /readyz`: Redis answers `PING` on a connection of the endpoints' own (never queued behind the
///   service's work) and every function library the service loaded is there — the pipeline's, which every
///   service's start loads, and the service's own list, the one it loads (one list per service, used for both):
///   `200 {"libraries":[…],"status":"ready"}`, else `503 {"missing":[…],"status":"not_ready"}` or
///   `503 {"error":"redis_unavailable","status":"not_ready"}`.
/// - `GET /metrics`: Prometheus text.
package struct OperatorEndpoints: Sendable {
    /// The connection `/readyz` uses.
    package var redis: any RedisCommandExecutor
    /// The function libraries the service loaded (`RedisFunctionLibrary.name`), the pipeline's first, all needed
    /// for `ready`.
    package var libraries: [String]
    /// The Prometheus text of the service's metrics.
    package var metrics: @Sendable () -> [UInt8]

    /// `libraries`: the service's own list, the one it loaded (``SharedConfiguration/connectWorker(clientName:libraries:logger:)``
    /// or its own loop); the pipeline's library, which every service's start loads, is added here.
    package init(redis: any RedisCommandExecutor, libraries: [RedisFunctionLibrary], metrics: @escaping @Sendable () -> [UInt8]) {
        self.redis = redis
        var names = [PipelineFunctions.library.name]
        for library in libraries where !names.contains(library.name) { names.append(library.name) }
        self.libraries = names
        self.metrics = metrics
    }

    /// Adds the three endpoints to `router` (a service's public router, or ``application(host:port:serverName:idleTimeout:onServerRunning:logger:)``'s).
    package func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/healthz") { _, _ in Self.json(.ok, Self.healthy) }
        router.get("/readyz") { _, _ in await readiness() }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics())))
        }
    }

    /// A listener of its own serving only the endpoints, run as a service of the group. `onServerRunning`
    /// gets the bound port (tests bind port 0).
    package func application(
        host: String, port: Int, serverName: String, idleTimeout: Duration? = nil,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }, logger: Logger
    ) -> some Service {
        let router = Router(context: BasicRequestContext.self)
        register(on: router)
        return Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: idleTimeout.map { .nanoseconds($0.nanoseconds) })),
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { await onServerRunning($0.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// `/readyz`'s answer.
    package func readiness() async -> Response {
        do {
            let replies = try await redis.pipeline([RedisCommand(keyless: "PING"), RedisCommand(keyless: "FUNCTION", "LIST")])
            let loaded = Set((replies.last?.array ?? []).compactMap(Self.libraryName))
            let missing = libraries.filter { !loaded.contains($0) }
            guard replies.first?.string == "PONG", missing.isEmpty else {
                var body = JSONWriter(capacity: 128)
                body.beginObject()
                body.array("missing", missing) { name, writer in writer.string(name) }
                body.member("status", "not_ready")
                body.endObject()
                return Self.json(.serviceUnavailable, body.bytes)
            }
            var body = JSONWriter(capacity: 256)
            body.beginObject()
            body.array("libraries", libraries) { name, writer in writer.string(name) }
            body.member("status", "ready")
            body.endObject()
            return Self.json(.ok, body.bytes)
        } catch {
            return Self.json(.serviceUnavailable, Self.redisUnavailable)
        }
    }

    /// `library_name` of one `FUNCTION LIST` entry.
    static func libraryName(_ entry: RedisReply) -> String? {
        guard let fields = entry.array else { return nil }
        for index in stride(from: 0, to: fields.count - 1, by: 2) where fields[index].string == "library_name" {
            return fields[index + 1].string
        }
        return nil
    }

    static let healthy = Array(#"{"status":"ok"}"#.utf8)
    static let redisUnavailable = Array(#"{"error":"redis_unavailable","status":"not_ready"}"#.utf8)

    static func json(_ status: HTTPResponse.Status, _ body: [UInt8]) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
