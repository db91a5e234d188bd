import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// Issue 33 (docs/PROJECTS.md): tollctl's ledger commands take `--project`. The real binary against a real
/// redis-server holding two users named alice, one in the default project and one in `games`, with `TOLLGATE_APPS`
/// listing both projects: each command reads the project it is given, an unknown project is refused, and `audit`
/// without `--project` audits both.
@Suite struct ProjectCommandsTests {
    static let games = ProjectID("games")!

    @Test func ledgerCommandsReadTheProjectTheyAreGiven() async throws {
        try await LedgerHarness.with(partitions: 1) { h in
            var applier = h.applier
            applier.projectCatalogs = [Self.games: testCatalog]
            #expect(try await h.deliver(Fixture.client("alice", [Fixture.transaction("d1", product: "coins100")])).outcome == .fulfilled)
            var purchase = Fixture.client("alice", [Fixture.transaction("g1", product: "coins2000")])
            purchase.project = Self.games.rawValue
            let id = try await h.submit(purchase)
            for read in try await h.read() where read.id == id {
                #expect(try await applier.apply(entry: read.entry, partition: read.partition).outcome == .fulfilled)
            }
            _ = try await LedgerGrants.grant(
                LedgerGrants.Request(user: "alice", coins: 5, reason: "goodwill", by: "ops", now: testNow),
                keys: h.keys.inProject(Self.games), on: h.redis)

            var environment = h.serviceEnvironment
            environment["TOLLGATE_APPS"] = try Self.appsFile()
            func tollctl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
                try await ChildProcess.run("tollctl", arguments: arguments, environment: environment)
            }

            let gamesUser = try await tollctl(["user", "alice", "--project", "games", "--json"])
            #expect(gamesUser.status == 0, "\(gamesUser.output)")
            #expect(try #require(JSONValue.read(Array(gamesUser.output.utf8)))["coins"]?.int == 2005, "\(gamesUser.output)")
            let defaultUser = try await tollctl(["user", "alice", "--json"])
            #expect(try #require(JSONValue.read(Array(defaultUser.output.utf8)))["coins"]?.int == 100, "\(defaultUser.output)")

            let grants = try await tollctl(["grants", "alice", "--project", "games", "--json"])
            #expect(try #require(JSONValue.read(Array(grants.output.utf8)))["coinsGranted"]?.int == 5, "\(grants.output)")
            let noGrants = try await tollctl(["grants", "alice", "--json"])
            #expect(try #require(JSONValue.read(Array(noGrants.output.utf8)))["coinsGranted"]?.int == 0, "\(noGrants.output)")

            // Records older than the owner index: the games project's is written under the games keys.
            _ = try await h.redis.send("DEL", h.keys.inProject(Self.games).transactionOwner(partition: 0, transactionId: "g1"))
            let indexed = try await tollctl(["index-transactions", "--project", "games"])
            #expect(indexed.output.contains("users=1 transactions=1 written=1"), "\(indexed.output)")
            let found = try await tollctl(["lookup", "--transaction", "g1", "--project", "games"])
            #expect(found.status == 0 && found.output.contains("owner alice"), "\(found.output)")
            let elsewhere = try await tollctl(["lookup", "--transaction", "g1"])
            #expect(elsewhere.status == 1 && elsewhere.output.contains("not_found"), "\(elsewhere.output)")

            let unknown = try await tollctl(["user", "alice", "--project", "shop3"])
            #expect(unknown.status == 1 && unknown.output.contains("unknown_project"), "\(unknown.output)")

            let audit = try await tollctl(["audit"])
            #expect(audit.status == 0, "\(audit.output)")
            #expect(audit.output.contains("project default\nusers=1 transactions=1 differences=0"), "\(audit.output)")
            #expect(audit.output.contains("project games\nusers=1 transactions=1 differences=0"), "\(audit.output)")
            // A difference in one project fails the audit of all.
            _ = try await h.redis.send("HINCRBY", h.keys.inProject(Self.games).account(user: "alice"), "coins", 1)
            let broken = try await tollctl(["audit"])
            #expect(broken.status == 1 && broken.output.contains("user=alice  stored=2006"), "\(broken.output)")
            let onlyDefault = try await tollctl(["audit", "--project", "default"])
            #expect(onlyDefault.status == 0 && !onlyDefault.output.contains("2006"), "\(onlyDefault.output)")
        }
    }

    /// A `TOLLGATE_APPS` file with the projects `default` and `games`, their catalogs and secrets.
    static func appsFile() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tollctl-projects-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let catalog = #"{"products": [{"productId": "coins100", "type": "consumable", "coins": 100}]}"#
        try Data(catalog.utf8).write(to: folder.appendingPathComponent("catalog.json"))
        let apps = #"""
            {"projects": [
              {"id": "default", "catalog": "catalog.json", "clientJwtSecret": "shop-secret-0123456789-0123456789-0123",
               "apps": [{"bundleId": "com.example.shop", "appAppleId": 1}]},
              {"id": "games", "catalog": "catalog.json", "clientJwtSecret": "games-secret-0123456789-0123456789-012",
               "apps": [{"bundleId": "com.example.game", "appAppleId": 3}]}
            ]}
            """#
        let path = folder.appendingPathComponent("apps.json")
        try Data(apps.utf8).write(to: path)
        return path.path
    }
}
