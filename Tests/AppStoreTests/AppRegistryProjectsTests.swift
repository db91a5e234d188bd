import AppStore
import Core
import Foundation
import Testing

/// Issue 33 (projects, docs/PROJECTS.md): `TOLLGATE_APPS` lists projects, each with its apps, catalog and user-token
/// secret; `{"apps": …}` stays the one project `default`. Checked strictly at start.
@Suite struct AppRegistryProjectsTests {
    static let secretA = String(repeating: "a", count: 32)
    static let secretB = String(repeating: "b", count: 40)

    /// A folder with two catalogs and a secret file, and `json` written as the apps file.
    static func registry(_ json: String, environment: [String: String] = [:]) throws -> AppRegistry {
        let folder = try AppRegistryTests.Folder()
        try #"{"products": []}"#.write(toFile: folder.url.appendingPathComponent("shop.json").path, atomically: true, encoding: .utf8)
        try #"{"products": []}"#.write(toFile: folder.url.appendingPathComponent("games.json").path, atomically: true, encoding: .utf8)
        try (secretB + "\n").write(toFile: folder.url.appendingPathComponent("games.secret").path, atomically: true, encoding: .utf8)
        let path = try folder.write(json)
        return try AppRegistry(reader: EnvironmentReader(["TOLLGATE_APPS": path].merging(environment) { $1 }))
    }

    static let twoProjects = """
        {"projects": [
          {"id": "default", "catalog": "shop.json", "clientJwtSecret": "\(secretA)",
           "apps": [{"bundleId": "com.example.shop"}, {"bundleId": "com.example.shop.mac"}]},
          {"id": "games", "catalog": "games.json", "clientJwtSecretFile": "games.secret",
           "apps": [{"bundleId": "com.example.game"}]}
        ]}
        """

    @Test func projectsAreReadWithTheirAppsCatalogsAndSecrets() throws {
        let registry = try Self.registry(Self.twoProjects)
        #expect(registry.hasProjects)
        #expect(registry.apps.map(\.bundleId) == ["com.example.shop", "com.example.shop.mac", "com.example.game"])
        #expect(registry.projects.map(\.id.rawValue) == ["default", "games"])
        #expect(registry.project(ofApp: "com.example.shop.mac") == .default)
        #expect(registry.project(ofApp: "com.example.game") == ProjectID("games"))
        #expect(registry.project(ofApp: "com.example.other") == nil)
        #expect(registry.project(ofApp: nil) == nil)
        #expect(registry.projects[1].clientJWTSecret == Self.secretB, "read from its file, without the newline")
        #expect(registry.projects[1].catalogPath?.hasSuffix("/games.json") == true)
        // Printing a project never prints its secret.
        #expect(!"\(registry.projects[1])".contains(Self.secretB))
        #expect(!String(reflecting: registry.projects[1]).contains(Self.secretB))
    }

    @Test func anAppsFileIsTheOneDefaultProject() throws {
        let registry = try Self.registry(#"{"apps": [{"bundleId": "com.example.app"}, {"bundleId": "com.example.app.mac"}]}"#)
        #expect(!registry.hasProjects)
        #expect(registry.projects.map(\.id) == [.default])
        #expect(registry.project(ofApp: "com.example.app.mac") == .default)
    }

    static func project(_ id: String, _ apps: String, extra: String = "", secret: String = secretA) -> String {
        #"{"id": "\#(id)", "catalog": "shop.json", "clientJwtSecret": "\#(secret)", "apps": [\#(apps)]\#(extra)}"#
    }

    /// Every kind of bad projects file stops the service at start with `TOLLGATE_APPS` and what is wrong, where; the
    /// secret itself is never in the message.
    @Test(arguments: [
        (#"{"projects": []}"#, "lists no projects"),
        (#"{"projects": [], "apps": []}"#, "unknown member \"apps\" beside \"projects\""),
        (#"{"projects": [\#(project("Shop", #"{"bundleId": "com.a"}"#))]}"#, "projects[0].id: 'Shop' is not 1-32"),
        (#"{"projects": [\#(project(String(repeating: "z", count: 33), #"{"bundleId": "com.a"}"#))]}"#, "is not 1-32"),
        (
            #"{"projects": [\#(project("a", #"{"bundleId": "com.a"}"#)), \#(project("a", #"{"bundleId": "com.b"}"#, secret: secretB))]}"#,
            "projects[1].id: a is listed twice"
        ),
        (
            #"{"projects": [\#(project("a", #"{"bundleId": "com.a"}"#)), \#(project("b", #"{"bundleId": "COM.A"}"#, secret: secretB))]}"#,
            "projects[1].apps[0].bundleId: COM.A is listed twice (projects[0].apps[0])"
        ),
        (
            #"{"projects": [\#(project("a", #"{"bundleId": "com.a"}"#)), \#(project("b", #"{"bundleId": "com.b"}"#))]}"#,
            "projects[1] has the client JWT secret of projects[0]"
        ),
        (#"{"projects": [\#(project("a", ""))]}"#, "projects[0] lists no apps"),
        (#"{"projects": [\#(project("a", #"{"bundleId": "com.a"}"#, secret: "short"))]}"#, "at least 32 bytes"),
        (
            #"{"projects": [\#(project("a", #"{"bundleId": "com.a"}"#, secret: "replace-me-replace-me-replace-me-x"))]}"#,
            "placeholder"
        ),
        (
            #"{"projects": [\#(project("a", #"{"bundleId": "com.a"}"#, extra: #", "clientJwtSecretFile": "games.secret""#))]}"#,
            "has both clientJwtSecret and clientJwtSecretFile"
        ),
        (#"{"projects": [{"id": "a", "catalog": "shop.json", "apps": [{"bundleId": "com.a"}]}]}"#, "needs clientJwtSecret"),
        (#"{"projects": [{"id": "a", "catalog": "missing.json", "clientJwtSecret": "\#(secretA)", "apps": []}]}"#, "catalog: cannot read"),
        (#"{"projects": [\#(project("a", #"{"bundleId": "com.a"}"#, extra: #", "color": 1"#))]}"#, "unknown member \"color\""),
    ])
    func badProjectsFilesAreRefused(json: String, problem: String) throws {
        do {
            _ = try Self.registry(json)
            Issue.record("accepted: \(json)")
        } catch let error as ConfigurationError {
            #expect(error.variable == "TOLLGATE_APPS")
            #expect(error.problem.contains(problem), "\(error.problem)")
            #expect(!error.problem.contains(Self.secretA) && !error.problem.contains(Self.secretB))
        }
    }
}
