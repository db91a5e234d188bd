import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The current `redis-server` child process of a ``RedisServer``.
///
/// `@unchecked Sendable` is safe: the only stored `Process` is read and replaced while holding `lock`, and
/// `Process` itself is only asked for `isRunning` / `processIdentifier`, which it answers thread-safely.
final class ServerProcess: @unchecked Sendable {
    private let lock = NSLock()
    private var process: Process?

    func run(executable: URL, arguments: [String]) throws {
        let child = Process()
        child.executableURL = executable
        child.arguments = arguments
        child.standardInput = FileHandle.nullDevice
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        lock.withLock { process = child }
    }

    /// The child's PID while it runs.
    func runningPID() -> pid_t? {
        lock.withLock {
            guard let process, process.isRunning else { return nil }
            return process.processIdentifier
        }
    }

    /// Polls until the child has exited; false on timeout.
    func waitForExit(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while runningPID() != nil {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
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
