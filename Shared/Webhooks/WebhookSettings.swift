package import Core
import Foundation

/// The endpoints and request settings the notifier and `tollctl webhooks` share, read from the environment.
///
/// Keys:
/// - `TOLLGATE_WEBHOOK_URL` and `TOLLGATE_WEBHOOK_SECRETS` — one endpoint (named `default`): its URL and its secrets,
///   comma-separated (the first signs; list the old and the new one during a rotation: each gets a `v1=` and a
///   `v2=`; each at least 32 bytes and not the placeholder, ``Core/SecretRule``, as service keys);
///   `TOLLGATE_WEBHOOK_PROJECT` its project (`default`)
/// - `TOLLGATE_WEBHOOKS` — instead, the path of a JSON file with several endpoints:
///   `[{"name": "crm", "url": "https://…", "secrets": ["…"], "types": ["coins"], "project": "games"}, …]` (`types`
///   optional: the event types sent; others advance that endpoint's cursor unsent; `project` optional, `default`:
///   the one project whose events it gets, docs/PROJECTS.md)
/// - `TOLLGATE_WEBHOOK_ALLOW_HTTP` — `true` allows plain `http://` to any host (`false`: only to loopback)
/// - `TOLLGATE_WEBHOOK_TIMEOUT` — the whole request's timeout (`10s`)
package struct WebhookSettings: Sendable {
    package var endpoints: [WebhookEndpoint]
    package var allowHTTP = false
    package var timeout: Duration = .seconds(10)

    package init(endpoints: [WebhookEndpoint], allowHTTP: Bool = false, timeout: Duration = .seconds(10)) {
        self.endpoints = endpoints
        self.allowHTTP = allowHTTP
        self.timeout = timeout
    }

    /// Reads and validates the keys above; no endpoint configured is an empty list (the caller decides whether that
    /// is an error). Each problem throws a ``Core/ConfigurationError`` naming the variable.
    package init(reader: EnvironmentReader) throws(ConfigurationError) {
        allowHTTP = try reader.bool("TOLLGATE_WEBHOOK_ALLOW_HTTP", default: false)
        timeout = try reader.duration("TOLLGATE_WEBHOOK_TIMEOUT", default: .seconds(10), minimum: .milliseconds(100))
        let single = reader.optional("TOLLGATE_WEBHOOK_URL")
        let file = reader.optional("TOLLGATE_WEBHOOKS")
        let variable: String
        switch (single, file) {
        case (.some, .some):
            throw ConfigurationError(variable: "TOLLGATE_WEBHOOKS", problem: "and TOLLGATE_WEBHOOK_URL must not both be set")
        case (.some(let url), nil):
            variable = "TOLLGATE_WEBHOOK_URL"
            guard let parsed = URL(string: url) else { throw ConfigurationError(variable: variable, problem: "is not a URL") }
            let secrets = reader.list("TOLLGATE_WEBHOOK_SECRETS")
            guard !secrets.isEmpty else {
                throw ConfigurationError(variable: "TOLLGATE_WEBHOOK_SECRETS", problem: "is required with TOLLGATE_WEBHOOK_URL")
            }
            var project = ProjectID.default
            if let text = reader.optional("TOLLGATE_WEBHOOK_PROJECT") {
                guard let id = ProjectID(text) else {
                    throw ConfigurationError(variable: "TOLLGATE_WEBHOOK_PROJECT", problem: "is not a project id (1-32 of a-z, 0-9, '-')")
                }
                project = id
            }
            endpoints = [WebhookEndpoint(name: "default", url: parsed, secrets: secrets, project: project)]
        case (nil, .some(let path)):
            variable = "TOLLGATE_WEBHOOKS"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(variable: variable, problem: "names a file that cannot be read")
            }
            do {
                endpoints = try Self.endpoints(json: Array(data))
            } catch {
                throw ConfigurationError(variable: variable, problem: "is not a valid endpoints file: \(error.message)")
            }
        case (nil, nil):
            endpoints = []
            return
        }
        if Set(endpoints.map(\.name)).count != endpoints.count {
            throw ConfigurationError(variable: variable, problem: "names an endpoint twice")
        }
        for endpoint in endpoints {
            // The one-endpoint form takes its secrets from a variable of their own: a problem with them names it.
            if single != nil, let problem = endpoint.secretsProblem() {
                throw ConfigurationError(variable: "TOLLGATE_WEBHOOK_SECRETS", problem: problem)
            }
            if let problem = endpoint.problem(allowHTTP: allowHTTP) { throw ConfigurationError(variable: variable, problem: problem) }
        }
    }

    /// The endpoint named `name`.
    package func endpoint(_ name: String) -> WebhookEndpoint? {
        endpoints.first { $0.name == name }
    }

    /// Reads the endpoints file: an array of `{name, url, secrets, types?, project?}` (`secrets` an array or a
    /// comma-separated string; `project` a project id, `default` when absent).
    static func endpoints(json: [UInt8]) throws(JSONError) -> [WebhookEndpoint] {
        guard case .array(let items) = try JSONReader.parse(json) else { throw JSONError("the document is not an array") }
        var endpoints: [WebhookEndpoint] = []
        for (index, item) in items.enumerated() {
            let fields = try JSONFields(item, path: "[\(index)]")
            let text = try fields.string("url")
            guard let url = URL(string: text) else { throw JSONError("[\(index)].url is not a URL") }
            let secrets: [String]
            if case .string(let joined)? = fields.optionalValue("secrets") {
                secrets = joined.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            } else {
                secrets = try fields.optionalStrings("secrets") ?? []
            }
            let types = try fields.optionalStrings("types").map(Set.init)
            var project = ProjectID.default
            if let text = try fields.optionalString("project") {
                guard let id = ProjectID(text) else { throw JSONError("[\(index)].project is not a project id (1-32 of a-z, 0-9, '-')") }
                project = id
            }
            endpoints.append(
                WebhookEndpoint(name: try fields.string("name"), url: url, secrets: secrets, types: types, project: project))
        }
        return endpoints
    }
}
