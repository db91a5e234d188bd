import Core
import Pipeline
import Redis
import ServiceKit
import TestSupport
import Testing

/// `connectRedis` and the job-results subscription on a real 6-node Redis Cluster. Serialized, like the other
/// cluster suites.
@Suite("Shared configuration on Redis Cluster", .serialized)
struct SharedConfigurationClusterTests {
    @Test func connectsTheClusterClientWithTheFunctionsOnEveryPrimary() async throws {
        try await withRedisCluster { cluster in
            // auto with one seed asks it; the cluster then needs more than one partition.
            let oneSeed = "redis://127.0.0.1:\(cluster.nodes[0].port)"
            let single = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": oneSeed])
            await #expect {
                _ = try await single.connectRedis(clientName: "test", logger: testLogger)
            } throws: { error in
                (error as? ConfigurationError)?.variable == "TOLLGATE_PARTITIONS"
            }

            let configuration = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": oneSeed, "TOLLGATE_PARTITIONS": "16"])
            let redis = try await configuration.connectRedis(clientName: "test", logger: testLogger)
            defer { redis.close() }
            let client = try #require(redis as? RedisClusterClient)
            #expect(client.slotMap.allPrimaries.count == 3)
            for primary in client.slotMap.allPrimaries {
                let listed = try await cluster.send(to: primary.port, "FUNCTION", "LIST", "LIBRARYNAME", PipelineFunctions.library.name)
                #expect(listed.array?.count == 1, "functions on \(primary)")
            }
            #expect(try await configuration.keys.recordedPartitions(on: redis) == 16)
            // Every partition's pipeline functions run, each on its partition's primary.
            for partition in configuration.keys.partitions {
                let keys = configuration.keys.jobs(partition: partition)
                #expect(try await PipelineFunctions.promote(on: redis, stream: keys, nowMilliseconds: 0, limit: 10) == 0)
            }
            // The operators' client is a cluster client of its own.
            let operators = try await configuration.connectOperatorsPool(clientName: "test-ops", logger: testLogger, like: redis)
            defer { operators.close() }
            #expect(operators is RedisClusterClient)

            // All seeds: the same, without asking; a configuration for other partitions is refused.
            let seeded = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": cluster.url, "TOLLGATE_PARTITIONS": "16"])
            let again = try await seeded.connectRedis(clientName: "test", logger: testLogger)
            again.close()
            #expect(again is RedisClusterClient)
            let other = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": cluster.url, "TOLLGATE_PARTITIONS": "8"])
            await #expect {
                _ = try await other.connectRedis(clientName: "test", logger: testLogger)
            } throws: { error in
                guard let error = error as? PipelineError, case .layoutMismatch = error else { return false }
                return true
            }
        }
    }

    /// A `PUBLISH` inside a Function on any primary reaches the subscription, which moves to the next seed when its
    /// node goes away.
    @Test func jobResultsReachTheSubscriberFromAnyNodeAndAfterItsNodeDies() async throws {
        try await withRedisCluster { cluster in
            let configuration = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": cluster.url, "TOLLGATE_PARTITIONS": "16"])
            let redis = try await configuration.connectRedis(clientName: "test", logger: testLogger)
            defer { redis.close() }
            let keys = configuration.keys
            let subscriber = RedisSubscriber(
                configuration: configuration.redis, channels: [keys.jobResultsChannel], pingInterval: .milliseconds(500),
                logger: testLogger)
            subscriber.start()
            defer { subscriber.close() }
            let received = Recorder<String>()
            let listening = Task {
                for await event in subscriber.events {
                    if case .message(_, let payload) = event { await received.append(String(decoding: payload, as: UTF8.self)) }
                }
            }
            defer { listening.cancel() }
            try await requireSubscribed(cluster, port: cluster.nodes[0].port, channel: keys.jobResultsChannel)

            // One acknowledgement with a PUBLISH in each partition: primaries other than the subscriber's node too.
            for partition in keys.partitions {
                let stream = keys.jobs(partition: partition).stream
                _ = try await redis.xgroupCreate(stream, group: "workers", startID: "0", makeStream: true)
                _ = try await redis.xadd(stream, fields: [("n", Array("\(partition)".utf8))])
                let entries = try await redis.xreadgroup(group: "workers", consumer: "c", stream: stream, count: 1, block: nil)
                let id = try #require(entries.first?.id)
                let applied = try await PipelineFunctions.ackWrite(
                    on: redis, stream: stream, group: "workers", id: id,
                    writes: [.publish(channel: keys.jobResultsChannel, string: "job-\(partition)")])
                #expect(applied)
            }
            #expect(await eventually { await received.count == 16 })
            #expect(Set(await received.values) == Set(keys.partitions.map { "job-\($0)" }))

            // The subscriber's node dies: it subscribes on the next seed and hears what is published afterwards.
            await cluster.kill(port: cluster.nodes[0].port)
            try await requireSubscribed(cluster, port: cluster.nodes[1].port, channel: keys.jobResultsChannel)
            _ = try await cluster.send(to: cluster.nodes[2].port, "PUBLISH", keys.jobResultsChannel, "after")
            #expect(await eventually { await received.values.contains("after") })
        }
    }

    /// Waits until the node at `port` has a subscriber on `channel`.
    private func requireSubscribed(_ cluster: RedisCluster, port: Int, channel: String) async throws {
        let subscribed = await eventually {
            let reply = try? await cluster.send(to: port, "PUBSUB", "NUMSUB", channel)
            return (reply?.array?.last?.int ?? 0) > 0
        }
        try #require(subscribed)
    }
}
