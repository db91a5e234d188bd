package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL for tests: `scripts/postgres` (Debian's server, as the `postgres` user when root) in its own
/// temporary directory on a free loopback port, fsync off. ``stop()`` and ``start()`` keep the directory and port, so
/// a test can take the database away and bring it back with its data. Prefer ``withPostgresServer(_:)``, which
/// always stops it and removes the directory.
package final class PostgresServer: Sendable {
    package let port: Int
    package let directory: URL
    /// `postgres://postgres:<password>@127.0.0.1:<port>/tollgate`.
    package let url: String

    private init(port: Int, directory: URL, url: String) {
        self.port = port
        self.directory = directory
        self.url = url
    }

    /// The repository's `scripts/postgres`, found from this file's path.
    static var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/postgres")
    }

    /// Creates a database cluster and starts it on a free port; throws with the script's output when it fails.
    package static func launch() async throws -> PostgresServer {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tollgate-pg-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try RedisServer.freeLoopbackPort()
            do {
                let output = try await run("up", directory: directory, port: port)
                guard let url = output.split(separator: "\n").last(where: { $0.hasPrefix("postgres://") }) else {
                    throw ChildProcess.Failure(description: "scripts/postgres up printed no URL: \(output)")
                }
                return PostgresServer(port: port, directory: directory, url: String(url))
            } catch {
                lastError = error
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError ?? ChildProcess.Failure(description: "PostgreSQL did not start")
    }

    /// Starts it again after ``stop()``, on the same port with the same data.
    package func start() async throws { _ = try await Self.run("up", directory: directory, port: port) }

    /// Stops it (fast shutdown: open connections are closed).
    package func stop() async throws { _ = try await Self.run("down", directory: directory, port: port) }

    /// Stops it and removes its directory.
    package func remove() async {
        _ = try? await stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func run(_ command: String, directory: URL, port: Int) async throws -> String {
        let log = directory.appendingPathComponent("script-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let process = try SpawnedProcess.spawn(
            script, arguments: [command, "--dir", directory.path, "--port", String(port), "--password", "tollgate", "--fast"],
            environment: ProcessInfo.processInfo.environment, output: .file(log))
        guard await process.waitForExit(timeout: .seconds(90)) else {
            process.send(SIGKILL)
            throw ChildProcess.Failure(description: "scripts/postgres \(command) did not finish within 90 s")
        }
        let output = (try? Data(contentsOf: log)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard process.terminationStatus == 0 else {
            throw ChildProcess.Failure(description: "scripts/postgres \(command) failed: \(output)")
        }
        return output
    }
}

/// Runs `body` with a fresh PostgreSQL, stopped and removed afterwards whatever happens.
package func withPostgresServer<T: Sendable>(_ body: (PostgresServer) async throws -> T) async throws -> T {
    let server = try await PostgresServer.launch()
    do {
        let result = try await body(server)
        await server.remove()
        return result
    } catch {
        await server.remove()
        throw error
    }
}
