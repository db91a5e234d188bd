import AppStore
@preconcurrency import Crypto
import Foundation
import TestSupport
import Testing

@testable import appstore_sim

/// Set App Account Token at the simulator, through the AppStore library's client: the token lands on the purchase and
/// on everything Apple signs about it afterwards; Apple's refusals come back with Apple's codes, each mapped to the
/// client's stable code, and change nothing.
@Suite("Set App Account Token against the simulator")
struct AppAccountTokenTests {
    private struct Setup {
        let sim: SimHarness
        let client: AppStoreServerAPIClient
        let verifier: SignedDataVerifier
    }

    private func withSim(_ body: (Setup) async throws -> Void) async throws {
        let key = P256.Signing.PrivateKey()
        let sim = try await SimHarness.start { $0.apiPublicKey = key.publicKey }
        do {
            let setup = Setup(
                sim: sim, client: try ServerAPIClientTests.client(sim, key: key),
                verifier: try SignedDataTests.verifier(roots: [try await sim.rootDER()]))
            try await body(setup)
        } catch {
            await sim.stop()
            throw error
        }
        await sim.stop()
    }

    /// The token Get Transaction Info shows for `id`, verified.
    private func currentToken(_ setup: Setup, _ id: String) async throws -> String? {
        let info = try await setup.client.getTransactionInfo(transactionId: id)
        return try #require(await setup.verifier.verifyTransaction(info.signedTransactionInfo).value).appAccountToken
    }

    private func refusal(_ body: () async throws -> Void) async -> AppStoreAPIError? {
        do {
            try await body()
            Issue.record("Apple accepted it")
        } catch let error as AppStoreAPIError {
            return error
        } catch {
            Issue.record("expected an AppStoreAPIError, got \(error)")
        }
        return nil
    }

    @Test func theTokenIsOnThePurchaseAndOnEveryLaterSignedTransactionAndNotification() async throws {
        try await withSim { setup in
            let vip = try await setup.sim.purchase(type: "Auto-Renewable Subscription", productId: "com.example.vip.month")
            #expect(try await currentToken(setup, vip.transactionId) == nil)
            let token = "7389A31A-FB6D-4569-A2A6-DB7D85D84813"
            try await setup.client.setAppAccountToken(
                originalTransactionId: vip.transactionId, UpdateAppAccountTokenRequest(appAccountToken: token))
            #expect(try await currentToken(setup, vip.transactionId) == token.lowercased())

            let renewal = try await setup.sim.event("DID_RENEW", vip.transactionId)
            let renewed = try #require(renewal["signedTransaction"] as? String)
            let transaction = try #require(await setup.verifier.verifyTransaction(renewed).value)
            #expect(transaction.originalTransactionId == vip.transactionId)
            #expect(transaction.transactionId != vip.transactionId)
            #expect(transaction.appAccountToken == token.lowercased())
            let payload = try #require(renewal["signedPayload"] as? String)
            let notification = try #require(await setup.verifier.verifyNotification(payload).value)
            #expect(notification.transaction?.payload.appAccountToken == token.lowercased())
            #expect(notification.renewalInfo?.payload.appAccountToken == token.lowercased())

            // Setting it again replaces it, renewals included.
            let second = UUID().uuidString.lowercased()
            try await setup.client.setAppAccountToken(
                originalTransactionId: vip.transactionId, UpdateAppAccountTokenRequest(appAccountToken: second))
            #expect(try await currentToken(setup, try #require(transaction.transactionId)) == second)
        }
    }

    @Test func applesRefusalsHaveStableCodesAndChangeNothing() async throws {
        try await withSim { setup in
            let token = UpdateAppAccountTokenRequest(appAccountToken: UUID().uuidString.lowercased())
            let vip = try await setup.sim.purchase(type: "Auto-Renewable Subscription", productId: "com.example.vip.month")
            let renewal = try #require(try await setup.sim.event("DID_RENEW", vip.transactionId)["transactionId"] as? String)
            let family = try await setup.sim.purchase(extra: ["inAppOwnershipType": "FAMILY_SHARED"])

            let notUUID = await refusal {
                try await setup.client.setAppAccountToken(
                    originalTransactionId: vip.transactionId, UpdateAppAccountTokenRequest(appAccountToken: "alice"))
            }
            #expect(notUUID?.code == .invalidAppAccountToken)
            #expect(notUUID?.code.rawValue == "api_invalid_app_account_token")
            #expect(notUUID?.httpStatus == 400 && notUUID?.appleErrorCode == 4_000_183)

            let notOriginal = await refusal {
                try await setup.client.setAppAccountToken(originalTransactionId: renewal, token)
            }
            #expect(notOriginal?.code.rawValue == "api_not_original_transaction_id")
            #expect(notOriginal?.httpStatus == 400 && notOriginal?.appleErrorCode == 4_000_187)

            let shared = await refusal {
                try await setup.client.setAppAccountToken(originalTransactionId: family.transactionId, token)
            }
            #expect(shared?.code.rawValue == "api_family_transaction_not_supported")
            #expect(shared?.httpStatus == 400 && shared?.appleErrorCode == 4_000_185)

            let unknown = await refusal {
                try await setup.client.setAppAccountToken(originalTransactionId: "2999999999999999", token)
            }
            #expect(unknown?.code.rawValue == "api_not_found")
            #expect(unknown?.httpStatus == 404 && unknown?.appleErrorCode == 4_040_010)

            for refusal in [notUUID, notOriginal, shared, unknown] { #expect(refusal?.isRetryable == false) }
            #expect(try await currentToken(setup, vip.transactionId) == nil)
            #expect(try await currentToken(setup, renewal) == nil)
            #expect(try await currentToken(setup, family.transactionId) == nil)
        }
    }
}
