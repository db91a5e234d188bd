import Core
@preconcurrency import Crypto
import Foundation

extension AppRegistry {
    /// The most apps one file may list.
    package static let maximumApps = 100
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
    /// - the document holds `apps` and nothing else (`projects` is refused: a deployment is one project today);
    /// - 1 to ``maximumApps`` apps, each with only the members above; the first is the default app;
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
        if document.members["projects"] != nil {
            throw problem("has projects: a deployment is one project today; list its apps under \"apps\"")
        }
        if let unknown = document.members.keys.sorted().first(where: { $0 != "apps" }) {
            throw problem("has an unknown member \"\(unknown.prefix(64))\" (only \"apps\")")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        let apps: [ConfiguredApp]
        do {
            apps = try document.array("apps") { (value, at) throws(JSONError) in
                try Self.app(JSONFields(value, path: at), environment: environment, folder: folder)
            }
        } catch {
            throw problem(error.message)
        }
        guard !apps.isEmpty else { throw problem("lists no apps") }
        guard apps.count <= Self.maximumApps else { throw problem("lists more than \(Self.maximumApps) apps") }
        var bundles: [String: Int] = [:]
        var appleIds: [Int64: Int] = [:]
        for (index, app) in apps.enumerated() {
            if let first = bundles.updateValue(index, forKey: app.bundleId.lowercased()) {
                throw problem("apps[\(index)].bundleId: \(app.bundleId) is listed twice (apps[\(first)])")
            }
            if let id = app.appAppleId, let first = appleIds.updateValue(index, forKey: id) {
                throw problem("apps[\(index)].appAppleId: \(id) is listed twice (apps[\(first)])")
            }
        }
        self.init(apps: apps, environment: environment, acceptsSandbox: acceptsSandbox)
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
