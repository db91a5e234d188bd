package import Core
package import Foundation

/// One receiver of Tollgate's webhooks: where to post, the secrets that sign (the first signs; all of them are
/// listed during a rotation), the project whose events it gets and, optionally, the event types it wants.
package struct WebhookEndpoint: Sendable, Hashable {
    /// Letters, digits, `_`, `-`, `.`; part of its consumer group (`webhook:<name>`) and of its Redis keys.
    package var name: String
    package var url: URL
    /// Never empty; each signs one `v1=` and one `v2=` of `Tollgate-Signature` (``WebhookSignature``). Each meets
    /// ``Core/SecretRule`` (at least 32 bytes, not the shipped placeholder), as service keys do.
    package var secrets: [String]
    /// The event types delivered (`type` of the event); nil delivers every type. Others advance the endpoint's
    /// cursor without a request.
    package var types: Set<String>?
    /// The one project whose events it is sent (docs/PROJECTS.md); other projects' events advance its group unsent,
    /// without touching its cursors, so a user id of two projects never mixes sequences here.
    package var project: ProjectID

    package init(name: String, url: URL, secrets: [String], types: Set<String>? = nil, project: ProjectID = .default) {
        self.name = name
        self.url = url
        self.secrets = secrets
        self.types = types
        self.project = project
    }

    /// The consumer group of this endpoint on every events stream.
    package var group: String { "webhook:\(name)" }

    /// Whether events of `type` go to this endpoint.
    package func wants(_ type: String?) -> Bool {
        guard let types else { return true }
        return type.map(types.contains) ?? false
    }

    /// Checks the name, the secrets (``Core/SecretRule``: at least 32 bytes, no placeholder; a problem names the
    /// secret by its position, never shows it) and the URL: `https`, or plain `http` to a loopback host (or anywhere
    /// with `allowHTTP`); no credentials or fragment in it. Returns what is wrong, or nil.
    package func problem(allowHTTP: Bool) -> String? {
        if let problem = Self.nameProblem(name) { return problem }
        if let problem = secretsProblem() { return problem }
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            return "endpoint \(name) needs an absolute http(s) URL"
        }
        if url.user != nil || url.password != nil || url.fragment != nil {
            return "endpoint \(name): the URL must not carry credentials or a fragment"
        }
        switch scheme {
        case "https": return nil
        case "http" where allowHTTP || Loopback.contains(host: host): return nil
        case "http": return "endpoint \(name): plain http is allowed only to loopback (or with TOLLGATE_WEBHOOK_ALLOW_HTTP=true)"
        default: return "endpoint \(name): the URL must be https"
        }
    }

    /// What is wrong with the secrets (``Core/SecretRule``), naming a secret by its position only, or nil.
    package func secretsProblem() -> String? {
        if secrets.isEmpty || secrets.contains(where: \.isEmpty) { return "endpoint \(name) needs at least one secret" }
        for (index, secret) in secrets.enumerated() {
            if let problem = SecretRule.problem(secret) {
                return "endpoint \(name): secret \(index + 1) of \(secrets.count) \(problem.message)"
            }
        }
        return nil
    }

    /// What is wrong with `name` as an endpoint's (1-64 letters, digits, `_`, `-`, `.`: it is part of its keys), or nil.
    package static func nameProblem(_ name: String) -> String? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
        if name.isEmpty || name.count > 64 || !name.allSatisfy(allowed.contains) {
            return "endpoint name '\(name.prefix(64))' must be 1-64 letters, digits, '_', '-' or '.'"
        }
        return nil
    }
}
