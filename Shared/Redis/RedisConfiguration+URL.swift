import Foundation

extension RedisConfiguration {
    /// Parses `redis://[[user]:password@]host[:port][,host[:port]…][/db]`.
    ///
    /// User and password may be percent-encoded; an IPv6 host goes in brackets (`redis://[::1]:6379`). Several
    /// comma-separated hosts are the seeds of a Redis Cluster: the first is `host:port`, the others
    /// ``additionalSeeds`` (each without a port gets 6379).
    /// Throws ``RedisError/invalidURL(_:)`` naming what is wrong; `rediss://` is rejected (no TLS support).
    package init(url: String) throws {
        self.init()
        var rest = Substring(url)
        guard let schemeEnd = rest.range(of: "://") else {
            throw RedisError.invalidURL("'\(Self.redacted(url))' does not start with redis://")
        }
        let scheme = rest[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "redis" else {
            if scheme == "rediss" {
                throw RedisError.invalidURL("rediss:// (TLS) is not supported; use redis://")
            }
            throw RedisError.invalidURL("unsupported scheme '\(scheme)://'; expected redis://")
        }
        rest = rest[schemeEnd.upperBound...]
        if let bad = rest.first(where: { $0 == "?" || $0 == "#" || $0.isWhitespace }) {
            throw RedisError.invalidURL("unexpected '\(bad)'; query, fragment and spaces are not supported")
        }
        let authority: Substring
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            database = try Self.parseDatabase(rest[rest.index(after: slash)...])
        } else {
            authority = rest
        }
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            try parseCredentials(authority[..<at])
            hostPort = authority[authority.index(after: at)...]
        }
        let hosts = hostPort.split(separator: ",", omittingEmptySubsequences: false)
        var seeds: [Endpoint] = []
        for text in hosts {
            guard !text.isEmpty || hosts.count == 1 else {
                throw RedisError.invalidURL("empty host in the comma-separated list")
            }
            try parseHostPort(text)
            seeds.append(Endpoint(host: host, port: port))
            port = 6379
        }
        host = seeds[0].host
        port = seeds[0].port
        additionalSeeds = Array(seeds.dropFirst())
    }

    private mutating func parseCredentials(_ userInfo: Substring) throws {
        guard let colon = userInfo.firstIndex(of: ":") else {
            throw RedisError.invalidURL("credentials must be written user:password@ or :password@")
        }
        let user = try Self.percentDecoded(userInfo[..<colon], what: "user name")
        let pass = try Self.percentDecoded(userInfo[userInfo.index(after: colon)...], what: "password")
        username = user.isEmpty ? nil : user
        password = pass.isEmpty ? nil : pass
        if username != nil && password == nil {
            throw RedisError.invalidURL("a user name needs a password (user:password@)")
        }
    }

    private mutating func parseHostPort(_ text: Substring) throws {
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw RedisError.invalidURL("IPv6 host is missing its closing ']'")
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisError.invalidURL("unexpected text after ']'") }
                portText = after.dropFirst()
            }
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else {
                throw RedisError.invalidURL("host has more than one ':'; write IPv6 addresses in brackets")
            }
            host = String(parts[0])
            portText = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty else { throw RedisError.invalidURL("host is empty") }
        if let portText {
            guard let value = Self.decimal(portText), (1...65535).contains(value) else {
                throw RedisError.invalidURL("port '\(portText)' is not a number between 1 and 65535")
            }
            port = value
        }
    }

    private static func parseDatabase(_ text: Substring) throws -> Int {
        if text.isEmpty { return 0 }
        guard let value = decimal(text), value <= Int(Int32.max) else {
            throw RedisError.invalidURL("database '\(text)' is not a non-negative number")
        }
        return value
    }

    /// Plain decimal digits only (no sign, no spaces).
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return Int(text)
    }

    private static func percentDecoded(_ text: Substring, what: String) throws -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else {
                throw RedisError.invalidURL("\(what) has a bad percent escape")
            }
            bytes.append(value)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The URL with anything between `://` and `@` hidden, for error messages.
    private static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@") else { return url }
        let start = url.range(of: "://")?.upperBound ?? url.startIndex
        return url[..<start] + "***" + url[at...]
    }
}
