package import Core
@preconcurrency import Crypto
import Foundation

extension AppRegistry {
    /// The most apps one file may list.
    package static let maximumApps = 100
    /// The most projects one file may list.
    package static let maximumProjects = 32
    private static let projectMembers: Set<String> = ["id", "catalog", "clientJwtSecret", "clientJwtSecretFile", "apps"]
    private static let appMembers: Set<String> = ["bundleId", "appAppleId", "apiKey", "sharedSecret", "offerKey"]
    private static let keyMembers: Set<String> = ["keyId", "issuerId", "privateKeyPath"]

    /// Reads the apps file `TOLLGATE_APPS` names:
    ///
    /// ```json
    /// {"apps": [
    ///   {"bundleId": "com.example.app", "appAppleId": 1234567890,
    ///    "apiKey": {"keyId": "ABCDE12345", "issuerId": "57246542-96fe-1a63-e053-0824d011072a",
    ///               "privateKeyPath": "AuthKey_ABCDE12345.p8"},
    ///    "sharedSecret": "…",
    ///    "offerKey": {"keyId": "OFFER12345", "issuerId": "57246542-96fe-1a63-e053-0824d011072a",
    ///                 "privateKeyPath": "SubscriptionKey_OFFER12345.p8"}},
    ///   {"bundleId": "com.example.app.mac", "appAppleId": 1234567891,
    ///    "apiKey": {"keyId": "ABCDE12345", "issuerId": "57246542-96fe-1a63-e053-0824d011072a",
    ///               "privateKeyPath": "AuthKey_ABCDE12345.p8"}}
    /// ]}
    /// ```
    ///
    /// Checked strictly, each problem a ``Core/ConfigurationError`` naming `TOLLGATE_APPS` and where in the file it is:
    /// - the document holds `apps` and nothing else — one project, `default` — or `projects` and nothing else:
    ///   1 to ``maximumProjects`` projects `{"id", "catalog", "clientJwtSecret" | "clientJwtSecretFile", "apps"}`, ids
    ///   ``Core/ProjectID`` and distinct, the catalog a readable path, the secret (inline, or a file's content without
    ///   its trailing newline) at least 32 bytes and never the placeholder, each project's apps as below
    ///   (docs/PROJECTS.md). A bundle ID is in one project only;
    /// - 1 to ``maximumApps`` apps in all, each with only the members above; the first is the default app;
    /// - `bundleId`: 1–155 letters, digits, `.` and `-`, listed once (compared without case, as App Store Connect does);
    /// - `appAppleId`: a positive integer, required in production, listed once;
    /// - `apiKey`, `offerKey`: exactly `keyId`, `issuerId` and `privateKeyPath` (relative to the file's folder), the
    ///   file a PEM P-256 private key. In-App Purchase keys are team-wide, so several apps may name the same key: each
    ///   app still gets its own tokens (`bid`) and its own rate budget;
    /// - `sharedSecret`: a non-empty string that is not a shipped placeholder.
    package init(file path: String, environment: AppStoreEnvironment, acceptsSandbox: Bool) throws(ConfigurationError) {
        func problem(_ text: String) -> ConfigurationError { ConfigurationError(variable: Self.variable, problem: text) }
        guard let data = FileManager.default.contents(atPath: path) else { throw problem("cannot read \(path)") }
        guard data.count <= 1 << 20 else { throw problem("is larger than 1 MiB: \(path)") }
        let document: JSONFields
        do {
            document = try JSONFields(JSONReader.parse(Array(data)))
        } catch {
            throw problem("is not a JSON object: \(error.message)")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        if document.members["projects"] != nil {
            if let unknown = document.members.keys.sorted().first(where: { $0 != "projects" }) {
                throw problem("has an unknown member \"\(unknown.prefix(64))\" beside \"projects\" (the apps go in their projects)")
            }
            let projects: [(project: ConfiguredProject, apps: [ConfiguredApp])]
            do {
                projects = try document.array("projects") { (value, at) throws(JSONError) in
                    try Self.project(JSONFields(value, path: at), environment: environment, folder: folder)
                }
            } catch {
                throw problem(error.message)
            }
            guard !projects.isEmpty else { throw problem("lists no projects") }
            guard projects.count <= Self.maximumProjects else { throw problem("lists more than \(Self.maximumProjects) projects") }
            var ids: [ProjectID: Int] = [:]
            var secrets: [String: Int] = [:]
            for (index, entry) in projects.enumerated() {
                if let first = ids.updateValue(index, forKey: entry.project.id) {
                    throw problem("projects[\(index)].id: \(entry.project.id) is listed twice (projects[\(first)])")
                }
                // A token is its project's because that project's secret signed it: a shared secret would let one
                // project's users in as another's.
                if let secret = entry.project.clientJWTSecret, let first = secrets.updateValue(index, forKey: secret) {
                    throw problem("projects[\(index)] has the client JWT secret of projects[\(first)]; each project needs its own")
                }
            }
            let apps = projects.flatMap(\.apps)
            try Self.checkDistinct(apps, projects: projects.map(\.project), problem: problem)
            self.init(apps: apps, projects: projects.map(\.project), environment: environment, acceptsSandbox: acceptsSandbox)
            return
        }
        if let unknown = document.members.keys.sorted().first(where: { $0 != "apps" }) {
            throw problem("has an unknown member \"\(unknown.prefix(64))\" (only \"apps\" or \"projects\")")
        }
        let apps: [ConfiguredApp]
        do {
            apps = try Self.apps(document, environment: environment, folder: folder)
        } catch {
            throw problem(error.message)
        }
        try Self.checkDistinct(apps, projects: nil, problem: problem)
        self.init(apps: apps, environment: environment, acceptsSandbox: acceptsSandbox)
    }

    /// The apps of `fields` (the document, or a project): 1 to ``maximumApps``.
    private static func apps(_ fields: JSONFields, environment: AppStoreEnvironment, folder: URL) throws(JSONError) -> [ConfiguredApp] {
        let apps = try fields.array("apps") { (value, at) throws(JSONError) in
            try Self.app(JSONFields(value, path: at), environment: environment, folder: folder)
        }
        let place = fields.path.isEmpty ? "" : fields.path + " "
        guard !apps.isEmpty else { throw JSONError("\(place)lists no apps") }
        guard apps.count <= Self.maximumApps else { throw JSONError("\(place)lists more than \(Self.maximumApps) apps") }
        return apps
    }

    /// Every app's bundle ID and app Apple ID listed once, in the whole file (so a bundle ID is in one project only).
    private static func checkDistinct(
        _ apps: [ConfiguredApp], projects: [ConfiguredProject]?, problem: (String) -> ConfigurationError
    ) throws(ConfigurationError) {
        guard apps.count <= Self.maximumApps else { throw problem("lists more than \(Self.maximumApps) apps") }
        func place(_ index: Int) -> String {
            guard let projects else { return "apps[\(index)]" }
            var rest = index
            for (number, project) in projects.enumerated() {
                if rest < project.bundleIds.count { return "projects[\(number)].apps[\(rest)]" }
                rest -= project.bundleIds.count
            }
            return "apps[\(index)]"
        }
        var bundles: [String: Int] = [:]
        var appleIds: [Int64: Int] = [:]
        for (index, app) in apps.enumerated() {
            if let first = bundles.updateValue(index, forKey: app.bundleId.lowercased()) {
                throw problem("\(place(index)).bundleId: \(app.bundleId) is listed twice (\(place(first)))")
            }
            if let id = app.appAppleId, let first = appleIds.updateValue(index, forKey: id) {
                throw problem("\(place(index)).appAppleId: \(id) is listed twice (\(place(first)))")
            }
        }
    }

    /// One project: `id`, `catalog`, `clientJwtSecret` or `clientJwtSecretFile`, `apps`.
    private static func project(
        _ fields: JSONFields, environment: AppStoreEnvironment, folder: URL
    ) throws(JSONError) -> (project: ConfiguredProject, apps: [ConfiguredApp]) {
        try checkMembers(fields, allowed: projectMembers)
        let text = try fields.string("id")
        guard let id = ProjectID(text) else {
            throw JSONError("\(fields.path).id: '\(text.prefix(64))' is not 1-32 of a-z, 0-9 and '-'")
        }
        let catalog = try fields.string("catalog")
        guard !catalog.isEmpty else { throw JSONError("\(fields.path).catalog is empty") }
        let catalogPath = catalog.hasPrefix("/") ? catalog : folder.appendingPathComponent(catalog).path
        guard FileManager.default.isReadableFile(atPath: catalogPath) else {
            throw JSONError("\(fields.path).catalog: cannot read \(catalogPath)")
        }
        let secret: String
        switch (try fields.optionalString("clientJwtSecret"), try fields.optionalString("clientJwtSecretFile")) {
        case (let inline?, nil):
            secret = inline
        case (nil, let file?):
            let resolved = file.hasPrefix("/") ? file : folder.appendingPathComponent(file).path
            guard let data = FileManager.default.contents(atPath: resolved) else {
                throw JSONError("\(fields.path).clientJwtSecretFile: cannot read \(resolved)")
            }
            // A trailing newline is the editor's, not the secret's.
            secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        case (nil, nil):
            throw JSONError("\(fields.path) needs clientJwtSecret or clientJwtSecretFile (its users' token secret)")
        case (.some, .some):
            throw JSONError("\(fields.path) has both clientJwtSecret and clientJwtSecretFile; keep one")
        }
        // The secret itself is never in a message.
        guard secret.utf8.count >= 32 else {
            throw JSONError("\(fields.path): the client JWT secret must be at least 32 bytes (HS256)")
        }
        guard !secret.contains("replace-me") else {
            throw JSONError("\(fields.path): the client JWT secret is the shipped placeholder; set the project's own")
        }
        let apps = try apps(fields, environment: environment, folder: folder)
        let project = ConfiguredProject(
            id: id, bundleIds: apps.map(\.bundleId), catalogPath: catalogPath, clientJWTSecret: secret)
        return (project, apps)
    }

    private static func app(_ fields: JSONFields, environment: AppStoreEnvironment, folder: URL) throws(JSONError) -> ConfiguredApp {
        try checkMembers(fields, allowed: appMembers)
        let bundleId = try fields.string("bundleId")
        guard isBundleId(bundleId) else {
            throw JSONError("\(fields.path).bundleId: '\(bundleId.prefix(64))' is not 1-155 letters, digits, '.' and '-'")
        }
        let appAppleId = try fields.optionalInt64("appAppleId")
        if let appAppleId, appAppleId < 1 { throw JSONError("\(fields.path).appAppleId must be positive") }
        if appAppleId == nil, environment == .production {
            throw JSONError("\(fields.path).appAppleId is required in production")
        }
        let sharedSecret = try fields.optionalString("sharedSecret")
        if let sharedSecret {
            guard !sharedSecret.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw JSONError("\(fields.path).sharedSecret is empty")
            }
            guard !sharedSecret.contains("replace-me") else {
                throw JSONError("\(fields.path).sharedSecret is the shipped placeholder; set the app's own")
            }
        }
        return ConfiguredApp(
            bundleId: bundleId, appAppleId: appAppleId, apiKey: try key(fields.optionalObject("apiKey"), folder: folder),
            sharedSecret: sharedSecret, offerKey: try key(fields.optionalObject("offerKey"), folder: folder))
    }

    private static func key(_ fields: JSONFields?, folder: URL) throws(JSONError) -> AppStoreKey? {
        guard let fields else { return nil }
        try checkMembers(fields, allowed: keyMembers)
        let keyId = try fields.string("keyId")
        let issuerId = try fields.string("issuerId")
        let path = try fields.string("privateKeyPath")
        guard !keyId.isEmpty, !issuerId.isEmpty, !path.isEmpty else {
            throw JSONError("\(fields.path): keyId, issuerId and privateKeyPath must not be empty")
        }
        let resolved = path.hasPrefix("/") ? path : folder.appendingPathComponent(path).path
        guard let data = FileManager.default.contents(atPath: resolved) else {
            throw JSONError("\(fields.path).privateKeyPath: cannot read \(resolved)")
        }
        let pem = String(decoding: data, as: UTF8.self)
        guard (try? P256.Signing.PrivateKey(pemRepresentation: pem)) != nil else {
            throw JSONError("\(fields.path).privateKeyPath: \(resolved) does not hold a P-256 (ES256) PEM private key")
        }
        return AppStoreKey(keyId: keyId, issuerId: issuerId, privateKeyPEM: pem)
    }

    private static func checkMembers(_ fields: JSONFields, allowed: Set<String>) throws(JSONError) {
        if let unknown = fields.members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw JSONError(
                "\(fields.path) has an unknown member \"\(unknown.prefix(64))\" (only \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    /// Apple's bundle ID characters: letters, digits, `.` and `-` (App Store Connect also refuses spaces and `_`).
    private static func isBundleId(_ text: String) -> Bool {
        (1...155).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E
                    || byte == 0x2D
            }
    }
}
