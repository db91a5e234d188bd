import AppStore
import Core
@preconcurrency import Crypto
import Foundation
import Testing

/// Issue 33: the apps of one deployment (`TOLLGATE_APPS`), read in one place and checked strictly at start; without
/// the file, the one-app variables are the shorthand they always were.
@Suite struct AppRegistryTests {
    /// A folder with an API key, an offer key and a file that is no key; removed at the end.
    final class Folder {
        let url: URL
        let apiKey: String
        let offerKey: String
        let notAKey: String

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("apps-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            apiKey = url.appendingPathComponent("AuthKey_TEAMKEY1.p8").path
            offerKey = url.appendingPathComponent("SubscriptionKey_OFFER1.p8").path
            notAKey = url.appendingPathComponent("not-a-key.p8").path
            try P256.Signing.PrivateKey().pemRepresentation.write(toFile: apiKey, atomically: true, encoding: .utf8)
            try P256.Signing.PrivateKey().pemRepresentation.write(toFile: offerKey, atomically: true, encoding: .utf8)
            try "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n".write(
                toFile: notAKey, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        /// Writes `json` as the apps file; returns its path.
        func write(_ json: String, name: String = "apps.json") throws -> String {
            let path = url.appendingPathComponent(name).path
            try json.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
    }

    static func read(_ environment: [String: String]) throws -> AppRegistry {
        try AppRegistry(reader: EnvironmentReader(environment))
    }

    @Test func twoAppsSharingOneTeamKeyAreReadInOrder() throws {
        let folder = try Folder()
        let path = try folder.write(
            """
            {"apps": [
              {"bundleId": "com.example.app", "appAppleId": 111,
               "apiKey": {"keyId": "TEAMKEY1", "issuerId": "issuer-1", "privateKeyPath": "AuthKey_TEAMKEY1.p8"},
               "sharedSecret": "ios-secret",
               "offerKey": {"keyId": "OFFER1", "issuerId": "issuer-1", "privateKeyPath": "\(folder.offerKey)"}},
              {"bundleId": "com.example.app.mac", "appAppleId": 222,
               "apiKey": {"keyId": "TEAMKEY1", "issuerId": "issuer-1", "privateKeyPath": "AuthKey_TEAMKEY1.p8"}}
            ]}
            """)
        let registry = try Self.read([
            "TOLLGATE_APPS": path, "TOLLGATE_ENVIRONMENT": "production", "TOLLGATE_ACCEPT_SANDBOX": "true",
        ])
        #expect(registry.apps.map(\.bundleId) == ["com.example.app", "com.example.app.mac"])
        #expect(registry.defaultApp.bundleId == "com.example.app")
        #expect(registry.environment == .production && registry.acceptsSandbox)
        let ios = try #require(registry.app("com.example.app"))
        let mac = try #require(registry.app("com.example.app.mac"))
        #expect(ios.appAppleId == 111 && mac.appAppleId == 222)
        // One team key, named by both apps (a relative path is the file's folder's).
        #expect(ios.apiKey == mac.apiKey)
        #expect(ios.apiKey?.keyId == "TEAMKEY1")
        #expect(ios.apiKey?.privateKeyPEM == (try String(contentsOfFile: folder.apiKey, encoding: .utf8)))
        #expect(ios.sharedSecret == "ios-secret" && mac.sharedSecret == nil)
        #expect(ios.offerKey?.keyId == "OFFER1" && mac.offerKey == nil)
        #expect(registry.app("com.example.other") == nil && registry.app(nil) == nil)
        #expect("\(ios.apiKey!)" == "AppStoreKey(keyId: TEAMKEY1)")
        // The identity the signature checks take: both apps, each with its own Apple ID.
        let identity = registry.identity
        #expect(identity.bundleId == "com.example.app" && identity.appAppleId == 111)
        #expect(identity.additionalApps == [AppIdentity.App(bundleId: "com.example.app.mac", appAppleId: 222)])
        #expect(try AppIdentity(reader: EnvironmentReader(["TOLLGATE_APPS": path])) == identity.with(environment: .sandbox))
    }

    @Test func withoutTheFileTheOneAppVariablesAreTheShorthand() throws {
        let folder = try Folder()
        let registry = try Self.read([
            "TOLLGATE_BUNDLE_ID": "com.example.app", "TOLLGATE_APP_APPLE_ID": "42", "TOLLGATE_SHARED_SECRET": "s3cret",
            "TOLLGATE_API_KEY_ID": "K1", "TOLLGATE_API_ISSUER_ID": "I1", "TOLLGATE_API_PRIVATE_KEY_PATH": folder.apiKey,
            "TOLLGATE_OFFER_KEY_ID": "O1", "TOLLGATE_OFFER_ISSUER_ID": "I1", "TOLLGATE_OFFER_PRIVATE_KEY_PATH": folder.offerKey,
        ])
        #expect(registry.apps.count == 1)
        let app = registry.defaultApp
        #expect(app.bundleId == "com.example.app" && app.appAppleId == 42 && app.sharedSecret == "s3cret")
        #expect(app.apiKey?.keyId == "K1" && app.offerKey?.keyId == "O1")
        #expect(registry.identity == AppIdentity(bundleId: "com.example.app", appAppleId: 42))
        #expect(throws: ConfigurationError(variable: "TOLLGATE_BUNDLE_ID", problem: "is required")) { try Self.read([:]) }
        #expect(throws: ConfigurationError(variable: "TOLLGATE_APP_APPLE_ID", problem: "is required in production")) {
            try Self.read(["TOLLGATE_BUNDLE_ID": "b", "TOLLGATE_ENVIRONMENT": "production"])
        }
    }

    /// Every kind of bad file stops the service at start with `TOLLGATE_APPS` and what is wrong, where.
    @Test(arguments: [
        ("{\"apps\": [{\"bundleId\": \"com.a\"}, {\"bundleId\": \"com.a\"}]}", "apps[1].bundleId: com.a is listed twice"),
        ("{\"apps\": [{\"bundleId\": \"com.a\"}, {\"bundleId\": \"COM.A\"}]}", "is listed twice"),
        (
            "{\"apps\": [{\"bundleId\": \"com.a\", \"appAppleId\": 5}, {\"bundleId\": \"com.b\", \"appAppleId\": 5}]}",
            "apps[1].appAppleId: 5 is listed twice"
        ),
        ("{\"apps\": [{\"bundleId\": \"com.a\", \"bundle\": \"x\"}]}", "apps[0] has an unknown member \"bundle\""),
        ("{\"apps\": [], \"extra\": 1}", "unknown member \"extra\""),
        ("{\"projects\": [{\"id\": \"p\", \"apps\": []}]}", "projects[0].catalog is missing"),
        ("{\"apps\": []}", "lists no apps"),
        ("{}", "apps is missing"),
        ("[]", "is not a JSON object"),
        ("{\"apps\": [", "is not a JSON object"),
        ("{\"apps\": {\"bundleId\": \"com.a\"}}", "apps is an object, not an array"),
        ("{\"apps\": [\"com.a\"]}", "apps[0] is a string, not an object"),
        ("{\"apps\": [{\"appAppleId\": 1}]}", "apps[0].bundleId is missing"),
        ("{\"apps\": [{\"bundleId\": \"\"}]}", "is not 1-155 letters"),
        ("{\"apps\": [{\"bundleId\": \"com.a{p0}\"}]}", "is not 1-155 letters"),
        ("{\"apps\": [{\"bundleId\": \"com.a\", \"appAppleId\": \"1\"}]}", "apps[0].appAppleId is a string, not an integer"),
        ("{\"apps\": [{\"bundleId\": \"com.a\", \"appAppleId\": 0}]}", "apps[0].appAppleId must be positive"),
        ("{\"apps\": [{\"bundleId\": \"com.a\", \"sharedSecret\": \"\"}]}", "apps[0].sharedSecret is empty"),
        ("{\"apps\": [{\"bundleId\": \"com.a\", \"sharedSecret\": \"replace-me\"}]}", "placeholder"),
        (
            "{\"apps\": [{\"bundleId\": \"com.a\", \"apiKey\": {\"keyId\": \"K\", \"issuerId\": \"I\"}}]}",
            "apps[0].apiKey.privateKeyPath is missing"
        ),
        (
            "{\"apps\": [{\"bundleId\": \"com.a\", \"apiKey\": {\"keyId\": \"K\", \"issuerId\": \"I\", \"privateKeyPath\": \"AuthKey_TEAMKEY1.p8\", \"pem\": \"x\"}}]}",
            "apps[0].apiKey has an unknown member \"pem\""
        ),
        (
            "{\"apps\": [{\"bundleId\": \"com.a\", \"apiKey\": {\"keyId\": \"K\", \"issuerId\": \"I\", \"privateKeyPath\": \"missing.p8\"}}]}",
            "apps[0].apiKey.privateKeyPath: cannot read"
        ),
        (
            "{\"apps\": [{\"bundleId\": \"com.a\", \"offerKey\": {\"keyId\": \"K\", \"issuerId\": \"I\", \"privateKeyPath\": \"not-a-key.p8\"}}]}",
            "apps[0].offerKey.privateKeyPath: "
        ),
        (
            "{\"apps\": [{\"bundleId\": \"com.a\", \"apiKey\": {\"keyId\": \"\", \"issuerId\": \"I\", \"privateKeyPath\": \"AuthKey_TEAMKEY1.p8\"}}]}",
            "must not be empty"
        ),
    ])
    func aBadFileIsRefusedNamingTheProblem(json: String, problem: String) throws {
        let folder = try Folder()
        let path = try folder.write(json)
        #expect {
            _ = try Self.read(["TOLLGATE_APPS": path])
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.variable == "TOLLGATE_APPS" && error.problem.contains(problem)
        }
    }

    @Test func productionNeedsEveryAppsAppleId() throws {
        let folder = try Folder()
        let path = try folder.write(#"{"apps": [{"bundleId": "com.a", "appAppleId": 1}, {"bundleId": "com.b"}]}"#)
        #expect(throws: ConfigurationError(variable: "TOLLGATE_APPS", problem: "apps[1].appAppleId is required in production")) {
            try Self.read(["TOLLGATE_APPS": path, "TOLLGATE_ENVIRONMENT": "production"])
        }
        #expect(try Self.read(["TOLLGATE_APPS": path]).apps.count == 2)
    }

    @Test func theFileAndTheOneAppVariablesAreNotMixed() throws {
        let folder = try Folder()
        let path = try folder.write(#"{"apps": [{"bundleId": "com.a"}]}"#)
        for variable in ["TOLLGATE_BUNDLE_ID", "TOLLGATE_SHARED_SECRET", "TOLLGATE_API_KEY_ID", "TOLLGATE_OFFER_PRIVATE_KEY_PATH"] {
            #expect {
                _ = try Self.read(["TOLLGATE_APPS": path, variable: "x"])
            } throws: { error in
                (error as? ConfigurationError)?.variable == "TOLLGATE_APPS"
                    && (error as? ConfigurationError)?.problem.contains(variable) == true
            }
        }
        #expect(throws: ConfigurationError(variable: "TOLLGATE_APPS", problem: "cannot read \(folder.url.path)/none.json")) {
            try Self.read(["TOLLGATE_APPS": folder.url.appendingPathComponent("none.json").path])
        }
    }

    @Test func aFileOfTooManyAppsIsRefused() throws {
        let folder = try Folder()
        let apps = (0...AppRegistry.maximumApps).map { #"{"bundleId": "com.example.app\#($0)"}"# }.joined(separator: ",")
        let path = try folder.write(#"{"apps": [\#(apps)]}"#)
        #expect(throws: ConfigurationError(variable: "TOLLGATE_APPS", problem: "lists more than 100 apps")) {
            try Self.read(["TOLLGATE_APPS": path])
        }
    }
}

extension AppIdentity {
    fileprivate func with(environment: AppStoreEnvironment) -> AppIdentity {
        var copy = self
        copy.environment = environment
        copy.acceptsSandbox = false
        return copy
    }
}
