#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Consumer names unique per replica, so that two replicas never share a pending-entries list.
package enum ConsumerName {
    /// `<hostname>-<pid>-<8 random hex digits>`, e.g. `verifier-7f9c-4242-1a2b3c4d`.
    package static func unique() -> String {
        "\(hostname())-\(getpid())-\(String(UInt32.random(in: .min ... .max), radix: 16))"
    }

    /// The short host name from `gethostname` (no DNS lookup), or `host`.
    private static func hostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let short = name.split(separator: ".").first.map(String.init) ?? ""
        return short.isEmpty ? "host" : short
    }
}
