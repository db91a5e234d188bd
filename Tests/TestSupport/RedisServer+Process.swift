import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The current `redis-server` child process of a ``RedisServer``.
///
/// Spawned with `posix_spawn` and an empty signal mask with default handlers: a test runner's threads may
/// block SIGTERM, and a child inheriting that mask (as with Foundation's `Process`) would ignore `stop()`.
///
/// `@unchecked Sendable` is safe: `pid` is only read or written while holding `lock`, and the child is
/// reaped with `waitpid` on its own PID under the same lock, so it is reaped exactly once.
final class ServerProcess: @unchecked Sendable {
    private let lock = NSLock()
    private var pid: pid_t?

    func run(executable: URL, arguments: [String]) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        for descriptor in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&files, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable.path, &files, &attributes, argv, environ)
        guard status == 0 else {
            throw RedisServer.StartError(description: "posix_spawn \(executable.path) failed: errno \(status)")
        }
        lock.withLock { pid = child }
    }

    /// The child's PID while it runs (reaps it once it has exited).
    func runningPID() -> pid_t? {
        lock.withLock {
            guard let current = pid else { return nil }
            var status: Int32 = 0
            let result = waitpid(current, &status, WNOHANG)
            if result == 0 { return current }
            pid = nil  // exited and reaped (or no longer our child)
            return nil
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
