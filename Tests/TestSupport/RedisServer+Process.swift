import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The current `redis-server` child process of a ``RedisServer`` (spawned by ``SpawnedProcess``: an empty
/// signal mask, default handlers, standard streams on `/dev/null`).
final class ServerProcess: Sendable {
    private let child = Mutex<SpawnedProcess?>(nil)

    func run(executable: URL, arguments: [String]) throws {
        let spawned = try SpawnedProcess.spawn(executable, arguments: arguments, environment: ProcessInfo.processInfo.environment)
        child.withLock { $0 = spawned }
    }

    /// The child's PID while it runs (reaps it once it has exited).
    func runningPID() -> pid_t? {
        child.withLock { child in
            guard let current = child, current.isRunning else {
                child = nil
                return nil
            }
            return current.processIdentifier
        }
    }

    /// Polls until the child has exited; false on timeout.
    func waitForExit(timeout: Duration) async -> Bool {
        guard let current = child.withLock({ $0 }) else { return true }
        return await current.waitForExit(timeout: timeout)
    }
}

extension RedisServer {
    /// Asks the kernel for a free loopback port (bind to port 0, read it back, close).
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StartError(description: "socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw StartError(description: "bind() failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw StartError(description: "getsockname() failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// True if something on `port` answers `PING` with `+PONG` (not `-LOADING`) within 200 ms.
    static func answersPing(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return false }
        let ping = Array("PING\r\n".utf8)
        guard send(fd, ping, ping.count, Int32(MSG_NOSIGNAL)) == ping.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count >= 5 && buffer.starts(with: Array("+PONG".utf8))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        return address
    }
}
