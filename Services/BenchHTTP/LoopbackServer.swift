import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 keep-alive server on `127.0.0.1` for the benchmark: one thread per connection, blocking
/// reads, every request answered with the same JSON after `delay` (Apple's, or the simulator's, work). It stands
/// in for `verifyReceipt` and costs both transports the same.
enum LoopbackServer {
    /// Listens on `port` (0: the kernel chooses), prints `port=<n>` and serves until killed.
    static func serve(port: Int, delay: Duration) throws -> Never {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw BenchError("socket failed") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 1024) == 0 else { throw BenchError("cannot listen on port \(port)") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        FileHandle.standardOutput.write(Data("port=\(UInt16(bigEndian: address.sin_port))\n".utf8))
        let microseconds = UInt32(clamping: delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000)
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let thread = Thread { serveConnection(connection, delayMicroseconds: microseconds) }
            thread.start()
        }
    }

    static let answer: [UInt8] = {
        let body = #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.app","in_app":[]}}"#
        return Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }()

    private static func serveConnection(_ connection: Int32, delayMicroseconds: UInt32) {
        defer { close(connection) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            // One request: headers up to the blank line, then Content-Length bytes of body.
            var headerEnd: Int?
            while headerEnd == nil {
                headerEnd = buffer.firstRange(of: [13, 10, 13, 10])?.upperBound
                if headerEnd == nil {
                    let count = read(connection, &chunk, chunk.count)
                    guard count > 0 else { return }
                    buffer.append(contentsOf: chunk[0..<count])
                }
            }
            guard let end = headerEnd else { return }
            let total = end + contentLength(buffer[0..<end])
            while buffer.count < total {
                let count = read(connection, &chunk, chunk.count)
                guard count > 0 else { return }
                buffer.append(contentsOf: chunk[0..<count])
            }
            buffer.removeFirst(total)
            if delayMicroseconds > 0 { usleep(delayMicroseconds) }
            let written = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            guard written == answer.count else { return }
        }
    }

    private static func contentLength(_ head: ArraySlice<UInt8>) -> Int {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        guard let range = text.range(of: "\r\ncontent-length:") else { return 0 }
        let digits = text[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber }
        return Int(digits) ?? 0
    }
}

/// The benchmark could not run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
