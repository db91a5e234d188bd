import AppStore
import Core
import Foundation
import Pipeline
import Redis
import ServiceLifecycle
import TestSupport
import Webhooks

/// A redis-server with `partitions` partitions, a pool on it (every call checked to stay in one slot when there are
/// several partitions) and a writer of contract-shaped events.
struct NotifierRig {
    let server: RedisServer
    let redis: any RedisCommandExecutor
    let keys: Keys
    let writer: ContractEventWriter

    static func with<T>(partitions: Int = 4, _ body: (NotifierRig) async throws -> T) async throws -> T {
        try await withRedisServer { server in
            let pool = RedisPool(configuration: server.configuration(), size: 4, logger: testLogger)
            try await pool.connect()
            defer { pool.close() }
            let keys = Keys(prefix: "tg", layout: try PartitionLayout(count: partitions))
            let redis: any RedisCommandExecutor = partitions == 1 ? pool : CheckedExecutor(pool, .sameSlot)
            try await NotifierFunctions.library.load(on: redis)
            // The layout and data version first, as the first service on a new Redis records them: a notifier binary
            // started on streams without that record takes them for older data and refuses them (docs/UPGRADING.md).
            try await keys.checkLayout(on: pool)
            return try await body(
                NotifierRig(server: server, redis: redis, keys: keys, writer: ContractEventWriter(redis: pool, keys: keys)))
        }
    }

    /// Delivery settings with test-sized times. The lease stays well above the sender's 5 s timeout: a full parallel
    /// test run has kept a loopback answer past 1 s, and a request that times out is sent again (a duplicate the
    /// receiver sees).
    static func fastDelivery(lease: Duration = .seconds(10), horizon: Duration = .seconds(60)) -> WebhookDeliveryConfiguration {
        var configuration = WebhookDeliveryConfiguration()
        configuration.pollInterval = .milliseconds(10)
        configuration.lease = lease
        configuration.recheck = .milliseconds(300)
        configuration.horizon = horizon
        configuration.retry = RetryPolicy(base: .milliseconds(20), cap: .milliseconds(100), maxAttempts: .max)
        configuration.breakerCooldown = .milliseconds(100)
        configuration.breakerMaximumCooldown = .milliseconds(300)
        return configuration
    }

    /// Starts one replica delivering `endpoint`'s events from every partition.
    func replica(
        _ endpoint: WebhookEndpoint, consumer: String, configuration: WebhookDeliveryConfiguration = fastDelivery()
    ) -> RunningDelivery {
        let delivery = WebhookDelivery(
            endpoint: endpoint, keys: keys.partitions.map { keys.webhook(endpoint.name, partition: $0) },
            // Every command delivery sends must declare its keys (a Redis Cluster routes by them).
            redis: CheckedExecutor(redis, .declaredKeys),
            sender: WebhookSender(transport: WebhookSender.makeTransport(connectionsPerHost: 8), timeout: .seconds(5)),
            configuration: configuration, consumer: consumer, logger: testLogger)
        let group = ServiceGroup(configuration: .init(services: [delivery], logger: testLogger))
        return RunningDelivery(group: group, task: Task { try await group.run() })
    }

    /// The cursor of `user`'s `side` for `endpoint`.
    func cursor(_ endpoint: String, user: String, side: LedgerSide = .primary) async throws -> Int64 {
        let partition = keys.partition(ofUser: user)
        let subject = WebhookEvent.subject(user: user, side: side)
        return try await redis.send(RedisCommand("HGET", keys.webhook(endpoint, partition: partition).cursor, subject)).int ?? 0
    }

    /// Dead letters of `endpoint` over every partition.
    func deadCount(_ endpoint: String) async throws -> Int {
        var total = 0
        for partition in keys.partitions { total += try await redis.xlen(keys.webhook(endpoint, partition: partition).dead) }
        return total
    }
}

/// A ``WebhookDelivery`` running in its own service group.
struct RunningDelivery {
    let group: ServiceGroup
    let task: Task<Void, any Error>

    func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

/// What a receiver got: each request's event, in arrival order.
struct Received: Sendable {
    var eventID: String
    var user: String?
    /// The event's `side` (`sandbox`: the user's sandbox side, its own seq).
    var side: String?
    /// The event's `project` (absent: the default project).
    var project: String?
    var seq: Int64
    var signature: String
    var body: Data

    init?(_ request: StubRecordedRequest) {
        guard let object = request.jsonBody(), let id = request.headers["tollgate-event-id"],
            let seq = object["seq"]?.int.map(Int64.init)
        else { return nil }
        eventID = id
        user = object["userId"]?.string
        side = object["side"]?.string
        project = object["project"]?.string
        self.seq = seq
        signature = request.headers["tollgate-signature"] ?? ""
        body = request.body
    }

    /// Whether each user's events arrived in seq order (a redelivery repeats the last one at most).
    static func inSeqOrder(_ received: [Received]) -> Bool {
        var last: [String: Int64] = [:]
        for item in received {
            let subject = (item.user ?? "~app") + (item.side.map { "~" + $0 } ?? "")
            if let previous = last[subject], item.seq < previous { return false }
            last[subject] = item.seq
        }
        return true
    }
}

extension StubHTTPServer {
    /// The events posted to `path`, parsed.
    func received(_ path: String = "/hook") async -> [Received] {
        await requests(to: path).compactMap(Received.init)
    }
}

/// An endpoint posting to `url`, signed with `secrets`.
func endpoint(
    _ url: URL, name: String = "crm", secrets: [String] = ["whsec_test"], types: Set<String>? = nil, project: ProjectID = .default
) -> WebhookEndpoint {
    WebhookEndpoint(name: name, url: url, secrets: secrets, types: types, project: project)
}
