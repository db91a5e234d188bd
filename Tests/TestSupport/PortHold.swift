import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback port kept bound, not listening, while its server is down: a client connecting to it is refused, as
/// it would be by a dead server, and no other test running in parallel can be handed the port meanwhile (one was:
/// a test's killed Redis port went to an HTTP server, and the client's next command read "HTTP/1.1 …" instead of
/// a refused connection).
final class PortHold: Sendable {
    private let descriptor = Mutex<Int32>(-1)

    /// Binds `port` on 127.0.0.1 (`SO_REUSEADDR`, as the server will) unless already held; does nothing if the
    /// port is taken already.
    func take(_ port: Int) {
        descriptor.withLock { held in
            guard held < 0 else { return }
            let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socketFD >= 0 else { return }
            var one: Int32 = 1
            setsockopt(socketFD, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound == 0 { held = socketFD } else { close(socketFD) }
        }
    }

    /// Lets the port go (before the server binds it again).
    func release() {
        descriptor.withLock { held in
            if held >= 0 { close(held) }
            held = -1
        }
    }

    /// Whether the port is held now.
    var isHeld: Bool { descriptor.withLock { $0 >= 0 } }
}
