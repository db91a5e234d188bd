import AppStore
import Foundation
import HTTPClient
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

    /// Operators' calls serve the key's project (docs/PROJECTS.md): a `games` key ties a `games` purchase to the
    /// `games` user of that id (asking Apple with the game app's own key, which the simulator takes for that app only)
    /// and looks its order up in the `games` ledger; a `default` key neither finds nor changes it, and its tie of the
    /// same user id is another customer's. Apple's own `games` notification is read by the `games` key only.
    @Test(.logsOnFailure) func operatorCallsAndAppleJobsServeTheirProject() async throws {
        let system = try SystemHarness.require()
        let ingest = system.ingestClient
        let sim = system.simClient
        let user = UserToken.newUser("ops")
        let games = SystemHarness.gamesJWTSecret

        // A games purchase made outside the app: Apple's notification names no user and parks in games. Its job
        // records the project of the app Apple signed: the games key reads it, the default key as any foreign job.
        let inGame = try await sim.purchase(
            "com.example.noads", type: "Non-Consumable", extra: ["bundleId": SystemHarness.gameBundleId])
        let note = try await ingest.postNotification(inGame.notificationBody)
        let noteJob = try #require(note.json["jobId"] as? String, "\(note.text)")
        // Until the verifier places it, the job is no project's but the default one's.
        try await eventuallyExpect { try await ingest.send(.get, "/v1/jobs/\(noteJob)", auth: .gamesService).status == 200 }
        let parked = try await ingest.waitForJob(noteJob, auth: .gamesService)
        #expect(parked.result["outcome"] as? String == "parked", "\(parked)")
        let foreignNote = try await ingest.send(.get, "/v1/jobs/\(noteJob)", auth: .service)
        #expect(foreignNote.status == 403, "\(foreignNote.status) \(foreignNote.text)")

        // The default key's calls ask the default project's apps only, which Apple says do not know the purchase.
        let fromDefault = try await ingest.post(
            "/v1/admin/apple/set-account-token?wait=20", auth: .service,
            json: ["originalTransactionId": inGame.originalTransactionId, "userId": user])
        #expect(fromDefault.json["status"] as? String == "rejected", "\(fromDefault.text)")
        let orderId = try #require(inGame.orderId)
        let lookedFromDefault = try await ingest.send(.get, "/v1/lookup?orderId=\(orderId)&wait=20", auth: .service)
        #expect(lookedFromDefault.json["status"] as? String == "rejected", "\(lookedFromDefault.text)")
        #expect(lookedFromDefault.json["reason"] as? String == "invalid_order_id", "\(lookedFromDefault.text)")

        // The games key ties it to the games user: the games ledger credits it, the default user of the id gets nothing.
        let tied = try await ingest.post(
            "/v1/admin/apple/set-account-token?wait=20", auth: .gamesService,
            json: ["originalTransactionId": inGame.originalTransactionId, "userId": user])
        #expect(tied.json["status"] as? String == "fulfilled", "\(tied.text)")
        let tiedResult = tied.json["result"] as? [String: Any] ?? [:]
        #expect(tiedResult["changed"] as? Bool == true && tiedResult["project"] as? String == "games", "\(tied.text)")
        let tiedJob = try #require(tied.json["jobId"] as? String, "\(tied.text)")
        #expect(try await ingest.send(.get, "/v1/jobs/\(tiedJob)", auth: .gamesService).status == 200)
        #expect(try await ingest.send(.get, "/v1/jobs/\(tiedJob)", auth: .service).status == 403)
        try await eventuallyExpect {
            try await ingest.entitlements(user: user, secret: games).entitlements.contains {
                $0.entitlement == "no_ads" && $0.state == "active"
            }
        }
        #expect(try await ingest.entitlements(user: user).entitlements.allSatisfy { $0.entitlement != "no_ads" })

        // Look Up Order ID by the games key: the owner as the games ledger binds it.
        let looked = try await ingest.send(.get, "/v1/lookup?orderId=\(orderId)&wait=20", auth: .gamesService)
        #expect(looked.json["status"] as? String == "fulfilled", "\(looked.text)")
        let transactions = (looked.json["result"] as? [String: Any])?["transactions"] as? [[String: Any]] ?? []
        #expect(transactions.count == 1, "\(looked.text)")
        #expect(transactions.first?["verified"] as? Bool == true && transactions.first?["userId"] as? String == user)

        // The default key's tie of a default purchase to the same user id is the default customer's: their own token,
        // their own ledger; the games customer keeps theirs.
        let onPhone = try await sim.purchase("com.example.noads", type: "Non-Consumable")
        let tiedInDefault = try await ingest.post(
            "/v1/admin/apple/set-account-token?wait=20", auth: .service,
            json: ["originalTransactionId": onPhone.originalTransactionId, "userId": user])
        #expect(tiedInDefault.json["status"] as? String == "fulfilled", "\(tiedInDefault.text)")
        let defaultToken = (tiedInDefault.json["result"] as? [String: Any])?["appAccountToken"] as? String
        #expect(defaultToken != nil && defaultToken != tiedResult["appAccountToken"] as? String, "\(tiedInDefault.text)")
        _ = try await system.awaitEntitlement(user, "no_ads", "active")

        // tollctl: `--project games` asks the game app and reads the games ledger; the default project does not know
        // the order; a project the file does not list is refused.
        let projects = system.directory.appendingPathComponent("projects.json").path
        let cli = try await system.tollctlAsVerifier(["lookup", orderId, "--project", "games"], apps: projects)
        #expect(cli.status == 0 && cli.output.contains("owner=\(user)"), "\(cli.output)")
        let cliDefault = try await system.tollctlAsVerifier(["lookup", orderId], apps: projects)
        #expect(cliDefault.status != 0 && cliDefault.output.contains("invalid_order_id"), "\(cliDefault.output)")
        let cliUnknown = try await system.tollctlAsVerifier(["lookup", orderId, "--project", "nope"], apps: projects)
        #expect(cliUnknown.status != 0 && cliUnknown.output.contains("unknown_project"), "\(cliUnknown.output)")
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
