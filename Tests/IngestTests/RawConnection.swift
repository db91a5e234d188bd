import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection for speaking HTTP by hand (slow senders).
final class RawConnection {
    let descriptor: Int32

    init?(port: Int) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            return nil
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// What arrives before the peer closes or `timeout` passes. Polls without blocking, sleeping between
    /// polls, so that no thread of the shared pool is held while the peer is slow.
    func receive(timeout: Duration) async -> String {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch read() {
            case .closed: return String(decoding: received, as: UTF8.self)
            case .bytes(let bytes):
                received += bytes
                if String(decoding: received, as: UTF8.self).contains("\r\n\r\n") { return String(decoding: received, as: UTF8.self) }
            case .nothing: try? await Task.sleep(for: .milliseconds(20))
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// True once the peer closes the connection within `timeout`.
    func waitForClose(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch read() {
            case .closed: return true
            case .bytes: continue
            case .nothing: try? await Task.sleep(for: .milliseconds(20))
            }
        }
        return false
    }

    private enum Read {
        case nothing, closed
        case bytes([UInt8])
    }

    /// One non-blocking look at the socket.
    private func read() -> Read {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return .nothing }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count <= 0 ? .closed : .bytes(Array(buffer[0..<count]))
    }
}
