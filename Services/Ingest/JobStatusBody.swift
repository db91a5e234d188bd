import Foundation
import Hummingbird
import Pipeline

/// The JSON of a job's status: `{attempt?, jobId, message?, nextAttemptAt?, reason?, result?, status}` (keys in
/// this order); `nextAttemptAt` is ISO 8601, `result` the fulfiller's JSON embedded as it is stored (as a string
/// if it is not valid JSON).
///
/// Written directly into the response's buffer: every `?wait=` answer is one of these, and going through
/// `JSONSerialization` (bridging, sorting keys, re-serializing the parsed result) cost more of ingest's CPU on
/// the purchase path than anything else but the TLS-free HTTP work itself (`scripts/bench-cpu --perf`).
enum JobStatusBody {
    static func response(_ httpStatus: HTTPResponse.Status, _ status: JobStatus) -> Response {
        Response(
            status: httpStatus, headers: [.contentType: "application/json"], body: .init(byteBuffer: render(status)))
    }

    /// `{"jobId": …, "status": "queued"}`: a job whose status hash is not there (yet).
    static func queuedResponse(jobID: String) -> Response {
        Response(
            status: .accepted, headers: [.contentType: "application/json"], body: .init(byteBuffer: renderQueued(jobID: jobID)))
    }

    static func renderQueued(jobID: String) -> ByteBuffer {
        var writer = JSONObjectWriter()
        writer.string("jobId", jobID)
        writer.string("status", "queued")
        return writer.finish()
    }

    static func render(_ status: JobStatus) -> ByteBuffer {
        var writer = JSONObjectWriter()
        if let attempt = status.attempt { writer.raw("attempt", String(attempt)) }
        writer.string("jobId", status.jobID)
        if let message = status.message { writer.string("message", message) }
        if let next = status.nextAttemptAtMilliseconds {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            writer.string("nextAttemptAt", formatter.string(from: Date(timeIntervalSince1970: Double(next) / 1000)))
        }
        if let reason = status.reason { writer.string("reason", reason) }
        if let result = status.resultJSON {
            if JSONSyntax.isValid(result.utf8) {
                writer.raw("result", result)
            } else {
                writer.string("result", result)
            }
        }
        writer.string("status", status.state.rawValue)
        return writer.finish()
    }
}

/// A JSON object written member by member into a `ByteBuffer`: string values escaped as RFC 8259 requires
/// (quote, backslash, control characters; `/` and non-ASCII as they are), raw values appended as given.
struct JSONObjectWriter {
    private var buffer = ByteBuffer()
    private var members = 0

    init() {
        buffer.reserveCapacity(192)
        buffer.writeInteger(UInt8(ascii: "{"))
    }

    mutating func string(_ key: String, _ value: String) {
        writeKey(key)
        Self.writeQuoted(value, to: &buffer)
    }

    /// A member whose value is already JSON (a number, or a document checked by ``JSONSyntax``).
    mutating func raw(_ key: String, _ json: String) {
        writeKey(key)
        buffer.writeString(json)
    }

    consuming func finish() -> ByteBuffer {
        buffer.writeInteger(UInt8(ascii: "}"))
        return buffer
    }

    private mutating func writeKey(_ key: String) {
        if members > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
        members += 1
        Self.writeQuoted(key, to: &buffer)
        buffer.writeInteger(UInt8(ascii: ":"))
    }

    static func writeQuoted(_ value: String, to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "\""))
        let utf8 = value.utf8
        guard utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            buffer.writeString(value)
            buffer.writeInteger(UInt8(ascii: "\""))
            return
        }
        let hex = Array("0123456789abcdef".utf8)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
            case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
            case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
            case 0..<0x20:
                buffer.writeStaticString("\\u00")
                buffer.writeInteger(hex[Int(byte >> 4)])
                buffer.writeInteger(hex[Int(byte & 0x0f)])
            default: buffer.writeInteger(byte)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}

/// Whether bytes are one JSON value (RFC 8259) and nothing else but whitespace, nested at most `maxDepth`
/// deep: a syntax check that builds nothing, for embedding stored JSON in an answer as it is.
enum JSONSyntax {
    static let maxDepth = 64

    static func isValid(_ text: String.UTF8View) -> Bool {
        let bytes = Array(text)
        var scanner = Scanner(bytes: bytes)
        guard scanner.value(depth: 0) else { return false }
        scanner.skipWhitespace()
        return scanner.index == bytes.count
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) -> Bool {
            skipWhitespace()
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return depth < JSONSyntax.maxDepth && object(depth: depth + 1)
            case UInt8(ascii: "["): return depth < JSONSyntax.maxDepth && array(depth: depth + 1)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func object(depth: Int) -> Bool {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return true
            }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\""), string() else { return false }
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { return false }
                index += 1
                guard value(depth: depth) else { return false }
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return true
                default: return false
                }
            }
        }

        mutating func array(depth: Int) -> Bool {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return true
            }
            while true {
                guard value(depth: depth) else { return false }
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return true
                default: return false
                }
            }
        }

        mutating func string() -> Bool {
            index += 1
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return true
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let hex = current, isHexDigit(hex) else { return false }
                            index += 1
                        }
                    default: return false
                    }
                case 0..<0x20: return false
                default: continue
                }
            }
            return false
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func number() -> Bool {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, isDigit(first) else { return false }
            index += 1
            if first != UInt8(ascii: "0") { digits() }
            if current == UInt8(ascii: ".") {
                index += 1
                guard let byte = current, isDigit(byte) else { return false }
                digits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let byte = current, isDigit(byte) else { return false }
                digits()
            }
            return true
        }

        mutating func digits() {
            while let byte = current, isDigit(byte) { index += 1 }
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
        }
    }
}
