package import Foundation
package import Redis

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real 6-node Redis Cluster for tests (3 primaries, 3 replicas, made by `redis-cli --cluster create`): each
/// node a `redis-server` child process on a free loopback port (its cluster bus on another free port), AOF
/// `appendfsync always`, in one temporary directory. Prefer ``withRedisCluster(nodeTimeout:_:)``, which always
/// stops every node and removes the directory.
package final class RedisCluster: Sendable {
    /// One node of the cluster.
    package struct Node: Sendable {
        package let port: Int
        let busPort: Int
        let directory: URL
        let process: ServerProcess

        package var endpoint: RedisConfiguration.Endpoint { .init(host: "127.0.0.1", port: port) }
    }

    package let nodes: [Node]
    package let directory: URL

    /// `redis://127.0.0.1:p1,127.0.0.1:p2,…`, as `TOLLGATE_REDIS_URL` would hold it.
    package var url: String { "redis://" + nodes.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") }

    /// A client configuration seeded with every node (short timeouts suit tests).
    package func configuration(commandTimeout: Duration = .seconds(5)) -> RedisConfiguration {
        var configuration = RedisConfiguration(port: nodes[0].port, connectTimeout: .seconds(1), commandTimeout: commandTimeout)
        configuration.additionalSeeds = nodes.dropFirst().map(\.endpoint)
        return configuration
    }

    private init(nodes: [Node], directory: URL) {
        self.nodes = nodes
        self.directory = directory
    }

    /// Starts six nodes, joins them, and waits until every node reports `cluster_state:ok` and every primary
    /// has its replica. `nodeTimeout` is `cluster-node-timeout` in milliseconds (failure detection).
    package static func start(nodeTimeout: Int = 2000) async throws -> RedisCluster {
        var attempt = 1
        while true {
            do {
                return try await startOnce(nodeTimeout: nodeTimeout)
            } catch let error as StartError where error.description.contains("exited at start") && attempt < 3 {
                // Most likely a port chosen free was taken by a parallel test before the node bound it (the suite
                // runs in parallel and every test picks loopback ports): start again on twelve new ports.
                attempt += 1
            }
        }
    }

    private static func startOnce(nodeTimeout: Int) async throws -> RedisCluster {
        let server = try executable("redis-server")
        let cli = try executable("redis-cli")
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tollgate-cluster-\(UUID().uuidString)", isDirectory: true)
        var ports = Set<Int>()
        while ports.count < 12 { ports.insert(try RedisServer.freeLoopbackPort()) }
        let sorted = Array(ports)
        var nodes: [Node] = []
        for index in 0..<6 {
            let nodeDirectory = directory.appendingPathComponent("node\(index)", isDirectory: true)
            try FileManager.default.createDirectory(at: nodeDirectory, withIntermediateDirectories: true)
            nodes.append(Node(port: sorted[index], busPort: sorted[index + 6], directory: nodeDirectory, process: ServerProcess()))
        }
        let cluster = RedisCluster(nodes: nodes, directory: directory)
        do {
            for node in nodes { try cluster.launch(node, executable: server, nodeTimeout: nodeTimeout) }
            for node in nodes { try await cluster.waitForPing(node) }
            try await cluster.create(cli: cli)
            try await cluster.waitUntilHealthy(timeout: .seconds(30))
            return cluster
        } catch {
            await cluster.shutdown()
            throw error
        }
    }

    /// A direct connection to one node (no routing), for checking where data landed. Close it after use.
    /// A connected cluster client of this cluster (close it when done).
    package func connectedClient() async throws -> RedisClusterClient {
        let client = try RedisClusterClient(configuration: configuration(), logger: testLogger)
        do {
            try await client.connect()
        } catch {
            client.close()
            throw error
        }
        return client
    }

    package func connection(to port: Int) -> RedisConnection {
        var configuration = configuration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.additionalSeeds = []
        return RedisConnection(configuration: configuration, logger: testLogger)
    }

    /// Runs one command on one node directly.
    package func send(to port: Int, _ name: String, _ arguments: any RedisArgumentConvertible...) async throws -> RedisReply {
        let connection = connection(to: port)
        defer { connection.close() }
        return try await connection.send(RedisCommand(name, arguments: arguments))
    }

    /// The slot map as the first answering node sees it.
    package func slotMap() async throws -> ClusterSlotMap {
        var lastError: any Error = StartError(description: "no node answered")
        for node in nodes where node.process.runningPID() != nil {
            do {
                return try ClusterSlotMap(clusterSlots: try await send(to: node.port, "CLUSTER", "SLOTS"), fallbackHost: "127.0.0.1")
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Kills one node abruptly (SIGKILL), like a crash.
    package func kill(port: Int) async {
        guard let node = nodes.first(where: { $0.port == port }), let pid = node.process.runningPID() else { return }
        Glibc.kill(pid, SIGKILL)
        _ = await node.process.waitForExit(timeout: .seconds(5))
    }

    /// Stops every node and deletes the directory.
    package func shutdown() async {
        for node in nodes {
            if let pid = node.process.runningPID() { Glibc.kill(pid, SIGKILL) }
        }
        for node in nodes { _ = await node.process.waitForExit(timeout: .seconds(5)) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Polls until every running node says `cluster_state:ok` and the map lists three primaries, each with a
    /// replica that runs.
    package func waitUntilHealthy(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        var last = "nothing checked"
        while ContinuousClock.now < deadline {
            do {
                last = try await health()
                if last.isEmpty { return }
            } catch {
                last = "\(error)"
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw StartError(description: "cluster in \(directory.path) not healthy within \(timeout): \(last)")
    }

    /// What is not healthy yet ("" when all is).
    private func health() async throws -> String {
        let running = nodes.filter { $0.process.runningPID() != nil }
        for node in running {
            let info = try await send(to: node.port, "CLUSTER", "INFO").string ?? ""
            if !info.contains("cluster_state:ok") { return "node \(node.port) not ok" }
        }
        let map = try await slotMap()
        let runningPorts = Set(running.map(\.port))
        guard map.primaries.allSatisfy({ $0 != nil }), map.allPrimaries.count == 3 else { return "slots not all served" }
        for primary in map.allPrimaries {
            guard runningPorts.contains(primary.port) else { return "primary \(primary) is down" }
            guard (map.replicas[primary] ?? []).contains(where: { runningPorts.contains($0.port) }) else {
                return "primary \(primary) has no replica"
            }
        }
        return ""
    }

    private func launch(_ node: Node, executable: URL, nodeTimeout: Int) throws {
        try node.process.run(
            executable: executable,
            arguments: [
                "--port", "\(node.port)", "--bind", "127.0.0.1", "--dir", node.directory.path,
                "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no",
                "--protected-mode", "no", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-port", "\(node.busPort)", "--cluster-node-timeout", "\(nodeTimeout)",
                "--cluster-require-full-coverage", "no", "--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1", "--logfile",
                node.directory.appendingPathComponent("redis.log").path,
            ])
    }

    private func waitForPing(_ node: Node) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if node.process.runningPID() == nil {
                throw StartError(description: "redis-server exited at start; see \(node.directory.path)/redis.log")
            }
            if RedisServer.answersPing(port: node.port) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw StartError(description: "node \(node.port) did not answer PING within 30 s")
    }

    private func create(cli: URL) async throws {
        let log = directory.appendingPathComponent("create.log")
        let process = try SpawnedProcess.spawn(
            cli, arguments: ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" } + ["--cluster-replicas", "1", "--cluster-yes"],
            environment: ProcessInfo.processInfo.environment, output: .file(log))
        guard await process.waitForExit(timeout: .seconds(60)) else {
            process.send(SIGKILL)
            throw StartError(description: "redis-cli --cluster create did not finish within 60 s; see \(log.path)")
        }
        guard process.terminationStatus == 0 else {
            throw StartError(description: "redis-cli --cluster create failed; see \(log.path)")
        }
    }

    /// Thrown when the cluster cannot be started.
    package struct StartError: Error, CustomStringConvertible {
        package let description: String
    }

    private static func executable(_ name: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"] {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw StartError(description: "\(name) not found on PATH; install the redis-server package")
    }
}

/// Runs `body` with a fresh cluster and always shuts it down afterwards, even when `body` throws.
///
/// One cluster at a time in the test process (``ClusterGate``): the suites of every target run in parallel, and six
/// clusters of six servers on a 2-core machine starve their failure detectors (`cluster-node-timeout`) into failovers
/// nobody asked for.
package func withRedisCluster<T>(nodeTimeout: Int = 2000, _ body: (RedisCluster) async throws -> T) async throws -> T {
    await ClusterGate.shared.acquire()
    let cluster: RedisCluster
    do {
        cluster = try await RedisCluster.start(nodeTimeout: nodeTimeout)
    } catch {
        await ClusterGate.shared.release()
        throw error
    }
    do {
        let result = try await body(cluster)
        await cluster.shutdown()
        await ClusterGate.shared.release()
        return result
    } catch {
        await cluster.shutdown()
        await ClusterGate.shared.release()
        throw error
    }
}

/// A first-come, first-served lock over the test process's clusters.
package actor ClusterGate {
    package static let shared = ClusterGate()
    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    package func release() {
        if waiting.isEmpty {
            held = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
