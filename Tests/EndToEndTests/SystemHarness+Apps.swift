import AppStore
@preconcurrency import Crypto
import Foundation
import TestSupport

/// Two apps on one deployment (``SystemHarness/Options/twoApps``): an iOS app and its macOS build, each with its own
/// App Store Server API key, listed in `TOLLGATE_APPS`; the simulator holds each key as valid for its app only
/// (`SIM_API_KEYS`), and gives the second app its own app Apple ID (`SIM_APP_APPLE_IDS`).
extension SystemHarness {
    /// The second app (the first is ``bundleId``).
    static let macBundleId = "com.example.app.mac"
    static let macAppAppleId = "1234567891"
    /// An app nobody configured: Apple signs its purchases all the same.
    static let otherBundleId = "com.example.other"

    /// The files of a two-app deployment under `directory`: one key per app, the apps file, and one more file whose
    /// second app names the first app's key (what an operator's mix-up, or an attacker who could pick the key, would
    /// make Tollgate send). Returns the settings for Tollgate and for the simulator.
    static func twoAppSettings(directory: URL) throws -> (tollgate: [String: String], sim: [String: String], mixedUpApps: String) {
        let iosKey = directory.appendingPathComponent("AuthKey_IOSKEY0001.p8")
        let macKey = directory.appendingPathComponent("AuthKey_MACKEY0001.p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(to: iosKey, atomically: true, encoding: .utf8)
        try P256.Signing.PrivateKey().pemRepresentation.write(to: macKey, atomically: true, encoding: .utf8)
        func apps(macKeyId: String, macKeyPath: URL) -> String {
            """
            {"apps": [
              {"bundleId": "\(bundleId)", "appAppleId": 1234567890, "sharedSecret": "\(sharedSecret)",
               "apiKey": {"keyId": "IOSKEY0001", "issuerId": "issuer-1", "privateKeyPath": "\(iosKey.lastPathComponent)"}},
              {"bundleId": "\(macBundleId)", "appAppleId": \(macAppAppleId), "sharedSecret": "\(sharedSecret)",
               "apiKey": {"keyId": "\(macKeyId)", "issuerId": "issuer-1", "privateKeyPath": "\(macKeyPath.lastPathComponent)"}}
            ]}
            """
        }
        let file = directory.appendingPathComponent("apps.json")
        try apps(macKeyId: "MACKEY0001", macKeyPath: macKey).write(to: file, atomically: true, encoding: .utf8)
        let mixedUp = directory.appendingPathComponent("apps-mixed-up.json")
        try apps(macKeyId: "IOSKEY0001", macKeyPath: iosKey).write(to: mixedUp, atomically: true, encoding: .utf8)
        let simKeys = """
            [{"bundleId": "\(bundleId)", "keyId": "IOSKEY0001", "publicKey": "\(iosKey.path)"},
             {"bundleId": "\(macBundleId)", "keyId": "MACKEY0001", "publicKey": "\(macKey.path)"},
             {"bundleId": "\(otherBundleId)", "keyId": "OTHERKEY01", "publicKey": "\(macKey.path)"}]
            """
        return (
            ["TOLLGATE_APPS": file.path, "TOLLGATE_CONFIRM_WITH_API": "true"],
            ["SIM_API_KEYS": simKeys, "SIM_APP_APPLE_IDS": #"{"\#(macBundleId)": \#(macAppAppleId)}"#],
            mixedUp.path
        )
    }

    /// Runs `tollctl` with the verifiers' settings for Apple, the apps file `apps` in place of theirs.
    func tollctlAsVerifier(_ arguments: [String], apps: String) async throws -> (status: Int32, output: String) {
        var environment = redis.environment
        environment.merge([
            "LOG_LEVEL": "warning", "TOLLGATE_ENVIRONMENT": "production", "TOLLGATE_APPS": apps,
            "TOLLGATE_ROOT_CERTS": directory.appendingPathComponent("sim-ca/root.der").path,
            "TOLLGATE_RECEIPT_INTERMEDIATE_CERTS": directory.appendingPathComponent("sim-ca/intermediate.der").path,
            "TOLLGATE_APPSTORE_API_URL": sim.baseURL, "TOLLGATE_APPSTORE_API_SANDBOX_URL": sim.baseURL + "/sandbox",
        ]) { _, new in new }
        return try await ChildProcess.run("tollctl", arguments: arguments, environment: environment)
    }
}

/// Two projects on one deployment (``SystemHarness/Options/twoProjects``): `default`, the iOS app and its Mac build
/// sharing one ledger, and `games`, an unrelated app with a ledger, a catalog file and a user-token secret of its own.
extension SystemHarness {
    /// The `games` project's app and its app Apple ID.
    static let gameBundleId = "com.example.game"
    static let gameAppAppleId = "1234567892"
    /// The `games` project's user-token secret (the `default` project's is ``clientJWTSecret``).
    static let gamesJWTSecret = "end-to-end-tests-games-jwt-secret-0123456789"
    /// The `games` project's service key (`ops-games@games:read+admin`); ``serviceKey`` is the `default` project's.
    static let gamesServiceKey = "end-to-end-tests-games-service-key-0123"
    /// Set in the services' environment when a projects file is in use, so that each spec leaves out the one-project
    /// variables the file replaces (`TOLLGATE_CATALOG`, `TOLLGATE_CLIENT_JWT_SECRET`); no service reads it.
    static let projectsMarker = "TOLLGATE_E2E_PROJECTS"

    /// The files of a two-project deployment under `directory`: one key per app and the projects file. Returns the
    /// settings for Tollgate and for the simulator.
    static func twoProjectSettings(
        directory: URL, catalog: URL
    ) throws -> (tollgate: [String: String], sim: [String: String], mixedUpApps: String) {
        var keys: [String: URL] = [:]
        for id in ["IOSKEY0001", "MACKEY0001", "GAMEKEY001"] {
            let key = directory.appendingPathComponent("AuthKey_\(id).p8")
            try P256.Signing.PrivateKey().pemRepresentation.write(to: key, atomically: true, encoding: .utf8)
            keys[id] = key
        }
        func app(_ bundle: String, _ appleId: String, _ keyId: String) -> String {
            """
            {"bundleId": "\(bundle)", "appAppleId": \(appleId), "sharedSecret": "\(sharedSecret)",
             "apiKey": {"keyId": "\(keyId)", "issuerId": "issuer-1", "privateKeyPath": "AuthKey_\(keyId).p8"}}
            """
        }
        let projects = """
            {"projects": [
              {"id": "default", "catalog": "\(catalog.path)", "clientJwtSecret": "\(clientJWTSecret)",
               "apps": [\(app(bundleId, "1234567890", "IOSKEY0001")), \(app(macBundleId, macAppAppleId, "MACKEY0001"))]},
              {"id": "games", "catalog": "\(catalog.path)", "clientJwtSecret": "\(gamesJWTSecret)",
               "apps": [\(app(gameBundleId, gameAppAppleId, "GAMEKEY001"))]}
            ]}
            """
        let file = directory.appendingPathComponent("projects.json")
        try projects.write(to: file, atomically: true, encoding: .utf8)
        let simKeys = [
            (bundleId, "IOSKEY0001"), (macBundleId, "MACKEY0001"), (gameBundleId, "GAMEKEY001"),
        ].map { #"{"bundleId": "\#($0.0)", "keyId": "\#($0.1)", "publicKey": "\#(keys[$0.1]?.path ?? "")"}"# }
        return (
            ["TOLLGATE_APPS": file.path, "TOLLGATE_CONFIRM_WITH_API": "true", projectsMarker: "1"],
            [
                "SIM_API_KEYS": "[" + simKeys.joined(separator: ", ") + "]",
                "SIM_APP_APPLE_IDS": #"{"\#(macBundleId)": \#(macAppAppleId), "\#(gameBundleId)": \#(gameAppAppleId)}"#,
            ],
            file.path
        )
    }
}
