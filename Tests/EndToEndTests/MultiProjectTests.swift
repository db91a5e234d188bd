import AppStore
import Foundation
import Ledger
import TestSupport
import Testing

/// Issue 33: two projects on one deployment — `default` (an iOS app and its Mac build sharing one ledger) and `games`
/// (an unrelated app with its own ledger, catalog and user-token secret). The project is the one of the app Apple
/// signed, never the client's word; a client's project is the one whose secret signed its token. Every app has its own
/// Server API key, which the simulator takes for that app only, and the verifiers confirm every StoreKit 2 transaction
/// with it: a purchase lands only when the call went out with its own app's key.
@Suite(.tollgateSystem(twoProjects: true))
struct MultiProjectTests {
    /// One user id in both projects is two customers: each project's purchases, refunds and notifications land in its
    /// own ledger, and each project's token reads only its own.
    @Test(.logsOnFailure) func oneUserIdInTwoProjectsIsTwoLedgers() async throws {
        let system = try SystemHarness.require()
        let ingest = system.ingestClient
        let sim = system.simClient
        let user = UserToken.newUser("both")
        let games = SystemHarness.gamesJWTSecret

        // default: the iPhone and the Mac app share the user's one ledger.
        let onPhone = try await sim.purchase("com.example.coins100", type: "Consumable")
        let onMac = try await sim.purchase(
            "com.example.coins2000", type: "Consumable", extra: ["bundleId": SystemHarness.macBundleId])
        #expect(try await ingest.submitTransaction(user: user, signedTransaction: onPhone.signedTransaction).status == "fulfilled")
        #expect(try await ingest.submitTransaction(user: user, signedTransaction: onMac.signedTransaction).status == "fulfilled")
        // games: the same user id, another customer.
        let inGame = try await sim.purchase(
            "com.example.coins100", type: "Consumable", extra: ["bundleId": SystemHarness.gameBundleId])
        let game = try await ingest.submitTransaction(user: user, signedTransaction: inGame.signedTransaction, secret: games)
        #expect(game.status == "fulfilled", "\(game)")
        // The job is the games user's: the default project's user of the same id cannot read it.
        let foreign = try await ingest.send(.get, "/v1/jobs/\(game.jobId)", auth: .user(user))
        #expect(foreign.status == 403, "\(foreign.status) \(foreign.text)")
        let own = try await ingest.send(.get, "/v1/jobs/\(game.jobId)", auth: .userSigned(user, secret: games))
        #expect(own.status == 200, "\(own.status) \(own.text)")
        try await system.awaitCoins(user, 2100)
        #expect(try await ingest.entitlements(user: user, secret: games).coins == 100)

        // Apple's refund of the game purchase (a notification: no user, routed by the app Apple signed) takes the coins
        // back in games only; the Mac purchase's refund in default only.
        _ = try await sim.event("REFUND", transactionId: inGame.transactionId)
        try await eventuallyExpect { try await ingest.entitlements(user: user, secret: games).coins == 0 }
        #expect(try await ingest.entitlements(user: user).coins == 2100)
        _ = try await sim.event("REFUND", transactionId: onMac.transactionId)
        try await system.awaitCoins(user, 100)
        #expect(try await ingest.entitlements(user: user, secret: games).coins == 0)
    }

    /// A token of one project cannot submit another project's purchase, whatever the user id: `wrong_project`, and
    /// nothing credited anywhere. A token signed with no project's secret is refused at the door.
    @Test(.logsOnFailure) func aTokenOfOneProjectCannotSubmitAnotherProjectsPurchase() async throws {
        let system = try SystemHarness.require()
        let ingest = system.ingestClient
        let sim = system.simClient
        let user = UserToken.newUser("cross")
        let games = SystemHarness.gamesJWTSecret

        let inGame = try await sim.purchase(
            "com.example.coins2000", type: "Consumable", extra: ["bundleId": SystemHarness.gameBundleId])
        let fromDefault = try await ingest.submitTransaction(user: user, signedTransaction: inGame.signedTransaction)
        #expect(fromDefault.status == "rejected" && fromDefault.reason == "wrong_project", "\(fromDefault)")
        let onPhone = try await sim.purchase("com.example.coins2000", type: "Consumable")
        let fromGames = try await ingest.submitTransaction(user: user, signedTransaction: onPhone.signedTransaction, secret: games)
        #expect(fromGames.status == "rejected" && fromGames.reason == "wrong_project", "\(fromGames)")
        #expect(try await ingest.entitlements(user: user).coins == 0)
        #expect(try await ingest.entitlements(user: user, secret: games).coins == 0)

        let forged = try await ingest.send(
            .get, "/v1/users/\(user)/entitlements",
            auth: .userSigned(user, secret: "a-secret-of-no-project-at-all-0123456789"))
        #expect(forged.status == 401, "\(forged.status) \(forged.text)")

        // Each purchase still lands in its own project, for its own buyer.
        #expect(
            try await ingest.submitTransaction(user: user, signedTransaction: inGame.signedTransaction, secret: games).status == "fulfilled"
        )
        #expect(try await ingest.submitTransaction(user: user, signedTransaction: onPhone.signedTransaction).status == "fulfilled")
        #expect(try await ingest.entitlements(user: user, secret: games).coins == 2000)
        try await system.awaitCoins(user, 2000)
    }
}

/// Waits up to 20 s for `condition`, then expects it.
private func eventuallyExpect(
    _ condition: @escaping @Sendable () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(200))
    }
    #expect(try await condition(), sourceLocation: sourceLocation)
}
