import Hummingbird
import HummingbirdTesting
import Logging
import Pipeline
import Redis
import ServiceKit
import TestSupport
import Testing

/// The operators' endpoints every service serves, against a real Redis.
@Suite struct OperatorEndpointsTests {
    static let library = RedisFunctionLibrary(
        "opsprobe", version: 1, functions: ["ping"],
        parts: [Array("redis.register_function(PREFIX .. 'ping', function() return 'pong' end)".utf8)])

    static func application(_ endpoints: OperatorEndpoints) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        endpoints.register(on: router)
        return Application(router: router)
    }

    /// The body's text: the answers are compared byte for byte (they were `JSONSerialization`'s, keys sorted).
    static func body(_ response: TestResponse) -> String { String(buffer: response.body) }

    @Test func healthReadinessAndMetrics() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let endpoints = OperatorEndpoints(redis: redis, libraries: [Self.library], metrics: { Array("probe_total 3\n".utf8) })
            let pipeline = PipelineFunctions.library.name
            try await Self.application(endpoints).test(.router) { client in
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok && Self.body(health) == #"{"status":"ok"}"#)

                // Neither the pipeline's library (every service's start loads it) nor the service's own is loaded
                // yet: not ready, and it says which.
                let missing = try await client.execute(uri: "/readyz", method: .get)
                #expect(missing.status == .serviceUnavailable)
                #expect(Self.body(missing) == #"{"missing":["\#(pipeline)","tollgate_opsprobe_v1"],"status":"not_ready"}"#)

                try await PipelineFunctions.library.load(on: redis)
                let partly = try await client.execute(uri: "/readyz", method: .get)
                #expect(Self.body(partly) == #"{"missing":["tollgate_opsprobe_v1"],"status":"not_ready"}"#)

                // Ready names what it checked: the pipeline's library and the service's list, no more.
                try await Self.library.load(on: redis)
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(ready.status == .ok)
                #expect(Self.body(ready) == #"{"libraries":["\#(pipeline)","tollgate_opsprobe_v1"],"status":"ready"}"#)

                let metrics = try await client.execute(uri: "/metrics", method: .get)
                #expect(metrics.status == .ok)
                #expect(String(buffer: metrics.body) == "probe_total 3\n")
                #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)

                // Redis gone: not ready, and `/healthz` still answers (the process is alive).
                await server.shutdown()
                let gone = try await client.execute(uri: "/readyz", method: .get)
                #expect(gone.status == .serviceUnavailable && Self.body(gone) == #"{"error":"redis_unavailable","status":"not_ready"}"#)
                #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            }
        }
    }
}
