package import Foundation
package import Redis

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `redis-server` for tests: a free loopback port, its own temporary directory, AOF on
/// (`appendfsync always`, no RDB snapshots), in the foreground as a child process.
///
/// `restart()` reuses the same port and directory, so data written before a `kill()` survives through the
/// AOF. Prefer ``withRedisServer(_:)``, which always stops the server and removes its directory.
package final class RedisServer: Sendable {
    /// Thrown when redis-server cannot be found or does not come up.
    package struct StartError: Error, CustomStringConvertible {
        package let description: String
    }

    package let port: Int
    /// The server's working directory (AOF files, `redis.log`).
    package let directory: URL
    private let executable: URL
    private let process: ServerProcess
    /// The port, held while the server is killed (``kill()``) until it is launched again.
    private let hold = PortHold()

    /// `redis://127.0.0.1:<port>`.
    package var url: String { "redis://127.0.0.1:\(port)" }

    /// A client configuration for this server (short timeouts suit tests).
    package func configuration(
        commandTimeout: Duration = .seconds(5), connectTimeout: Duration = .seconds(1)
    ) -> RedisConfiguration {
        RedisConfiguration(port: port, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
    }

    private init(port: Int, directory: URL, executable: URL, process: ServerProcess) {
        self.port = port
        self.directory = directory
        self.executable = executable
        self.process = process
    }

    /// Starts a server on a free port and waits until it answers PING.
    package static func start() async throws -> RedisServer {
        try await start(loading: nil)
    }

    /// Starts a server on a free port holding a copy of the RDB file `dump` (an upgrade fixture: data an earlier build
    /// wrote, Tests/Fixtures/upgrade), then turns the AOF on as ``start()`` runs it, so that ``restart()`` keeps the
    /// data. The file itself is never written.
    package static func start(loading dump: URL?) async throws -> RedisServer {
        let executable = try findExecutable()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tollgate-redis-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            let server = RedisServer(
                port: port, directory: directory, executable: executable,
                process: ServerProcess())
            do {
                if let dump {
                    let copy = directory.appendingPathComponent("dump.rdb")
                    try? FileManager.default.removeItem(at: copy)
                    try FileManager.default.copyItem(at: dump, to: copy)
                    try await server.launch(loadingDump: true)
                    try await server.appendOnlyFromNowOn()
                } else {
                    try await server.launch()
                }
                return server
            } catch {
                lastError = error  // most likely the port was taken meanwhile; try another
                await server.kill()
                server.hold.release()
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError ?? StartError(description: "redis-server did not start")
    }

    /// Whether the redis-server process is running.
    package var isRunning: Bool { process.runningPID() != nil }

    /// Stops the server gracefully (SIGTERM), escalating to SIGKILL after 5 s.
    package func stop() async {
        guard let pid = process.runningPID() else { return }
        Glibc.kill(pid, SIGTERM)
        if await process.waitForExit(timeout: .seconds(5)) { return }
        await kill()
    }

    /// Kills the server abruptly (SIGKILL), like a crash.
    package func kill() async {
        guard let pid = process.runningPID() else { return }
        Glibc.kill(pid, SIGKILL)
        _ = await process.waitForExit(timeout: .seconds(5))
        hold.take(port)
    }

    /// Starts the server again on the same port and directory (stopping it first if it still runs).
    package func restart() async throws {
        await stop()
        try await launch()
    }

    /// Stops the server and deletes its directory.
    package func shutdown() async {
        await stop()
        hold.release()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Launches redis-server; `loadingDump`: with the AOF off, so that it loads `dump.rdb` (with the AOF on it reads
    /// only the AOF).
    private func launch(loadingDump: Bool = false) async throws {
        hold.release()
        let arguments = [
            "--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory.path, "--dbfilename", "dump.rdb",
            "--appendonly", loadingDump ? "no" : "yes", "--appendfsync", "always", "--save", "",
            "--daemonize", "no", "--protected-mode", "no", "--enable-debug-command", "local",
            "--logfile", directory.appendingPathComponent("redis.log").path,
        ]
        try process.run(executable: executable, arguments: arguments)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if process.runningPID() == nil {
                let log = directory.appendingPathComponent("redis.log").path
                throw StartError(description: "redis-server exited at start on port \(port); see \(log)")
            }
            if Self.answersPing(port: port) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw StartError(description: "redis-server on port \(port) did not answer PING within 30 s")
    }

    /// `CONFIG SET appendonly yes` on a server launched without it, then waits until the AOF holds the data.
    private func appendOnlyFromNowOn() async throws {
        let redis = RedisConnection(configuration: configuration(), logger: testLogger)
        try await redis.connect()
        defer { redis.close() }
        _ = try await redis.send("CONFIG", "SET", "appendonly", "yes")
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let info = try await redis.send("INFO", "persistence").string ?? ""
            if info.contains("aof_enabled:1"), info.contains("aof_rewrite_in_progress:0"), info.contains("aof_rewrite_scheduled:0") {
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw StartError(description: "redis-server on port \(port) did not write its AOF within 30 s")
    }

    private static func findExecutable() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"] {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent("redis-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw StartError(description: "redis-server not found on PATH; install the redis-server package")
    }
}

/// Runs `body` with a fresh server (holding a copy of the RDB file `dump` when given, ``RedisServer/start(loading:)``)
/// and always shuts it down afterwards, even when `body` throws.
package func withRedisServer<T>(loading dump: URL? = nil, _ body: (RedisServer) async throws -> T) async throws -> T {
    let server = try await RedisServer.start(loading: dump)
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}
