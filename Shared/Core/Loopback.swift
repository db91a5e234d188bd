#if canImport(Glibc)
import Glibc
#endif

/// The one rule for "this machine itself" in a URL Tollgate is configured with (a webhook endpoint, Apple's API
/// base): exactly `localhost`, a literal IPv4 address in 127.0.0.0/8 written as four decimal parts, or the IPv6
/// address `::1` (bracketed or not, in any spelling `inet_pton` reads). A name that merely starts with `127.`
/// (`127.attacker.example`) is a name like any other, resolved by DNS: it is not loopback.
package enum Loopback {
    package static func contains(host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" { return true }
        if let parts = ipv4(host) { return parts[0] == 127 }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var address = in6_addr()
        guard bare.contains(":"), inet_pton(AF_INET6, bare, &address) == 1 else { return false }
        return withUnsafeBytes(of: &address) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
    }

    /// The four parts of a dotted-decimal IPv4 literal (each 1-3 digits, at most 255), or nil.
    static func ipv4(_ text: String) -> [Int]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var values: [Int] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(part), value <= 255
            else { return nil }
            values.append(value)
        }
        return values
    }
}
