import Core
import Crypto
import Foundation

/// One entry of `TOLLGATE_SERVICE_KEYS`: `name:scope+scope:key` (the key is everything after the second colon), or a
/// bare key, which keeps the meaning keys had before scopes: every scope, named `key-` plus the first 8 hex digits
/// of its SHA-256 (never the key itself). The name is what calls record (in the events they write).
package struct ServiceKey: Sendable, Equatable {
    /// What a key may do. `read`: customer info, look-ups, jobs, entitlements, events; `consent`: record a user's
    /// consent; `spend`: spend a user's coins; `grant`: grant and revoke entitlements (and coins, when enabled);
    /// `admin`: operators' calls over HTTP.
    package enum Scope: String, Sendable, CaseIterable, Comparable {
        case read, consent, spend, grant, admin

        package static func < (a: Scope, b: Scope) -> Bool { a.rawValue < b.rawValue }
    }

    package var name: String
    package var scopes: Set<Scope>
    package var key: String
    /// A bare key: every scope, and the service warns at start that it should be scoped.
    package var isBare: Bool

    package init(name: String, scopes: Set<Scope>, key: String) {
        (self.name, self.scopes, self.key, isBare) = (name, scopes, key, false)
    }

    /// Parses one entry: with two colons and a name (`[A-Za-z0-9._-]{1,64}`) before the first, a scoped key (an
    /// unknown or missing scope is an error, never a bare key with every scope); otherwise a bare key. A key shorter
    /// than 32 bytes is an error that names the entry by its name only.
    package init(entry: String) throws(ServiceKeyError) {
        let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, PlainIdentifier.isValid(parts[0]) else {
            guard entry.utf8.count >= 32 else { throw .tooShort(name: nil, bytes: entry.utf8.count) }
            let digest = Hex.lowercase(Array(SHA256.hash(data: Data(entry.utf8))).prefix(4))
            (name, scopes, key, isBare) = ("key-\(digest)", Set(Scope.allCases), entry, true)
            return
        }
        let name = String(parts[0])
        var scopes: Set<Scope> = []
        for word in parts[1].split(separator: "+", omittingEmptySubsequences: false) {
            guard let scope = Scope(rawValue: String(word)) else { throw .unknownScope(name: name, String(word.prefix(32))) }
            scopes.insert(scope)
        }
        let key = String(parts[2])
        guard key.utf8.count >= 32 else { throw .tooShort(name: name, bytes: key.utf8.count) }
        (self.name, self.scopes, self.key, isBare) = (name, scopes, key, false)
    }
}

extension ServiceKey {
    /// Parses every entry; two keys may not share a name.
    package static func list(_ entries: [String]) throws(ServiceKeyError) -> [ServiceKey] {
        var keys: [ServiceKey] = []
        for entry in entries {
            let key = try ServiceKey(entry: entry)
            if keys.contains(where: { $0.name == key.name }) { throw .duplicateName(key.name) }
            keys.append(key)
        }
        return keys
    }
}

/// Why an entry of `TOLLGATE_SERVICE_KEYS` is refused.
package enum ServiceKeyError: Error, Equatable {
    case tooShort(name: String?, bytes: Int)
    case unknownScope(name: String, String)
    case duplicateName(String)

    package var problem: String {
        switch self {
        case .tooShort(let name?, let bytes): return "must hold keys of at least 32 bytes each (\(name)'s has \(bytes))"
        case .tooShort(nil, let bytes): return "must hold keys of at least 32 bytes each (one has \(bytes))"
        case .unknownScope(let name, let word):
            return "gives \(name) the unknown scope '\(word)' (scopes: read, consent, spend, grant, admin)"
        case .duplicateName(let name): return "names two keys \(name)"
        }
    }
}

/// The service that called, once its key matched: its name and scopes, never the key.
struct ServiceCaller: Sendable, Hashable {
    var name: String
    var scopes: Set<ServiceKey.Scope>

    func may(_ scope: ServiceKey.Scope) -> Bool { scopes.contains(scope) }
}
