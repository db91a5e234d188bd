#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback TCP socket that listens but never accepts or answers, like a hung server.
package struct SilentListener: Sendable {
    package struct Failure: Error {}

    package let port: Int
    private let descriptor: Int32

    package init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ready else {
            Glibc.close(fd)
            throw Failure()
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    package func close() {
        Glibc.close(descriptor)
    }
}
