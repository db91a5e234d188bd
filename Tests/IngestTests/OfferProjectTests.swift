import AppStore
import Core
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

/// Issue 33: a promotional offer is signed only for an app of the caller's own project (docs/PROJECTS.md). A project
/// of one app needs no `bundleId`, even when the deployment has several apps in other projects; naming another
/// project's app is `422 unknown_app`, never a signature for an app the caller does not run.
@Suite struct OfferProjectTests {
    static let gamesSecret = "test-games-secret-0123456789abcdefghijklmn"
    static let gameBundleId = "com.example.game"

    @Test func offersAreSignedOnlyForTheCallersProjectsApps() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await OfferKeyFixture.recordAlicesVIP(redis)
            let catalog = try Catalog(products: [
                Product(productId: "com.example.vip.month", type: .autoRenewable, entitlement: "vip", offers: ["winback50"])
            ])
            let games = try #require(ProjectID("games"))
            try await OfferKeyFixture.withApp(
                server, catalog: catalog,
                configure: { configuration in
                    // Two projects: default (the offers app alone), games (another app, its own secret).
                    configuration.app.additionalApps = [AppIdentity.App(bundleId: Self.gameBundleId, appAppleId: 9)]
                    configuration.projectApps = [.default: [configuration.app.bundleId], games: [Self.gameBundleId]]
                    configuration.projects = [
                        .init(id: games, catalog: catalog, clientJWTSecret: Self.gamesSecret)
                    ]
                }
            ) { client, _ in
                let body = #"{"productId":"com.example.vip.month","offerId":"winback50"}"#
                // default: one app in the project, so no bundleId is needed, and the offers app's key signs.
                let alice = try await IngestHarness.userHeaders("alice")
                let signed = try await client.execute(
                    uri: "/v1/offers/promotional", method: .post, headers: alice, body: ByteBuffer(string: body))
                #expect(signed.status == .ok, "\(String(buffer: signed.body))")
                #expect(IngestHarness.json(signed)["signature"]?["keyIdentifier"]?.string == OfferKeyFixture.keyId)

                // games: its one app has no offer key; naming the default project's app signs nothing.
                let gamer = IngestHarness.bearer(try await IngestHarness.token(user: "alice", secret: Self.gamesSecret))
                let own = try await client.execute(
                    uri: "/v1/offers/promotional", method: .post, headers: gamer, body: ByteBuffer(string: body))
                #expect(IngestHarness.errorCode(own) == "offers_not_configured", "\(String(buffer: own.body))")
                let borrowed = try await client.execute(
                    uri: "/v1/offers/promotional", method: .post, headers: gamer,
                    body: ByteBuffer(string: #"{"productId":"com.example.vip.month","offerId":"winback50","bundleId":"com.example.app"}"#))
                #expect(IngestHarness.errorCode(borrowed) == "offers_not_configured", "\(String(buffer: borrowed.body))")
            }
        }
    }
}
