package import Core
import Crypto
import Foundation

/// One entry of `TOLLGATE_SERVICE_KEYS`: `name:scope+scope:key` or `name@project:scope+scope:key` (the key is
/// everything after the second colon), or a bare key, which keeps the meaning keys had before scopes: every scope,
/// named `key-` plus the first 8 hex digits of its SHA-256 (never the key itself). The name is what calls record (in
/// the events they write). A key serves one project (docs/PROJECTS.md), `default` unless it names one: every call it
/// makes runs on that project's ledger.
package struct ServiceKey: Sendable, Equatable {
    /// What a key may do. `read`: customer info, the ledger's look-ups, jobs, entitlements, events; `lookup`: look-ups
    /// that ask Apple (`GET /v1/lookup?orderId=`, Look Up Order ID); `consent`: record a user's consent; `spend`:
    /// spend a user's coins; `grant`: grant and revoke entitlements (and coins, when enabled); `admin`: operators'
    /// calls over HTTP (`/v1/admin/apple/…`, and look-ups that ask Apple).
    package enum Scope: String, Sendable, CaseIterable, Comparable {
        case read, lookup, consent, spend, grant, admin

        package static func < (a: Scope, b: Scope) -> Bool { a.rawValue < b.rawValue }
    }

    package var name: String
    package var scopes: Set<Scope>
    package var key: String
    /// The project whose users the key reads and changes; never another's.
    package var project: ProjectID
    /// A bare key: every scope, and the service warns at start that it should be scoped.
    package var isBare: Bool

    package init(name: String, scopes: Set<Scope>, key: String, project: ProjectID = .default) {
        (self.name, self.scopes, self.key, self.project, isBare) = (name, scopes, key, project, false)
    }

    /// Parses one entry: with two colons and a name (`[A-Za-z0-9._-]{1,64}`, optionally `@` and a project id)
    /// before the first, a scoped key (an unknown or missing scope is an error, never a bare key with every scope, and
    /// so is a malformed project id); otherwise a bare key of the default project. A key shorter than 32 bytes is an
    /// error that names the entry by its name only.
    package init(entry: String) throws(ServiceKeyError) {
        let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        let label = parts.count == 3 ? parts[0].split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false) : []
        guard parts.count == 3, let first = label.first, PlainIdentifier.isValid(first) else {
            guard entry.utf8.count >= SecretRule.minimumBytes else { throw .tooShort(name: nil, bytes: entry.utf8.count) }
            let digest = Hex.lowercase(Array(SHA256.hash(data: Data(entry.utf8))).prefix(4))
            (name, scopes, key, project, isBare) = ("key-\(digest)", Set(Scope.allCases), entry, .default, true)
            return
        }
        let name = String(first)
        var project = ProjectID.default
        if label.count == 2 {
            guard let named = ProjectID(String(label[1])) else { throw .invalidProject(name: name, String(label[1].prefix(32))) }
            project = named
        }
        var scopes: Set<Scope> = []
        for word in parts[1].split(separator: "+", omittingEmptySubsequences: false) {
            guard let scope = Scope(rawValue: String(word)) else { throw .unknownScope(name: name, String(word.prefix(32))) }
            scopes.insert(scope)
        }
        let key = String(parts[2])
        guard key.utf8.count >= SecretRule.minimumBytes else { throw .tooShort(name: name, bytes: key.utf8.count) }
        (self.name, self.scopes, self.key, self.project, isBare) = (name, scopes, key, project, false)
    }
}

extension ServiceKey {
    /// Parses every entry; two keys may not share a name, nor two names one key string (the caller a call records
    /// would be whichever came last: issue 42, item 12), and each names a project of `projects` (nil: any).
    package static func list(_ entries: [String], projects: Set<ProjectID>? = nil) throws(ServiceKeyError) -> [ServiceKey] {
        var keys: [ServiceKey] = []
        for entry in entries {
            let key = try ServiceKey(entry: entry)
            if keys.contains(where: { $0.name == key.name }) { throw .duplicateName(key.name) }
            if let twin = keys.first(where: { $0.key == key.key }) { throw .duplicateKey(names: twin.name, key.name) }
            if let projects, !projects.contains(key.project) { throw .unknownProject(name: key.name, key.project.rawValue) }
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
    /// One key string under two names: the error names them, never the key.
    case duplicateKey(names: String, String)
    case invalidProject(name: String, String)
    case unknownProject(name: String, String)

    package var problem: String {
        switch self {
        case .tooShort(let name?, let bytes):
            return "must hold keys of at least \(SecretRule.minimumBytes) bytes each (\(name)'s has \(bytes))"
        case .tooShort(nil, let bytes): return "must hold keys of at least \(SecretRule.minimumBytes) bytes each (one has \(bytes))"
        case .unknownScope(let name, let word):
            return "gives \(name) the unknown scope '\(word)' (scopes: read, lookup, consent, spend, grant, admin)"
        case .duplicateName(let name): return "names two keys \(name)"
        case .duplicateKey(let first, let second): return "gives \(first) and \(second) the same key (one key, one name)"
        case .invalidProject(let name, let text):
            return "gives \(name) the project '\(text)', which is not a project id (1-32 of a-z, 0-9, '-')"
        case .unknownProject(let name, let id): return "binds \(name) to the project \(id), which TOLLGATE_APPS does not list"
        }
    }
}

/// The service that called, once its key matched: its name, scopes and project, never the key.
struct ServiceCaller: Sendable, Hashable {
    var name: String
    var scopes: Set<ServiceKey.Scope>
    /// The one project the key serves (``ServiceKey/project``).
    var project: ProjectID = .default

    func may(_ scope: ServiceKey.Scope) -> Bool { scopes.contains(scope) }

    /// Whether the key holds one of `scopes`.
    func mayAny(_ scopes: [ServiceKey.Scope]) -> Bool { scopes.contains { may($0) } }
}
