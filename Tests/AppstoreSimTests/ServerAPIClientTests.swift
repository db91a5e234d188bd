import AppStore
@preconcurrency import Crypto
import Foundation
import TestSupport
import Testing

@testable import appstore_sim

/// The AppStore library's own App Store Server API client against the simulator.
@Suite("App Store Server API client against the simulator")
struct ServerAPIClientTests {
    static func client(_ sim: SimHarness, key: P256.Signing.PrivateKey, environment: AppStoreEnvironment = .production) throws
        -> AppStoreServerAPIClient
    {
        try AppStoreServerAPIClient(
            configuration: AppStoreServerAPIConfiguration(
                issuerId: "57246542-96fe-1a63-e053-0824d011072a", keyId: "TESTKEY123", privateKeyPEM: key.pemRepresentation,
                bundleId: "com.example.app", environment: environment,
                productionURL: sim.url(""), sandboxURL: sim.url("/sandbox"), timeout: .seconds(30)))
    }

    @Test func everyEndpointAnswersTheClientWithVerifiableData() async throws {
        let key = P256.Signing.PrivateKey()
        try await withStubServer { receiver in
            await receiver.respond(to: "/apple", with: [.json("{}")])
            try await SimHarness.with({
                $0.apiPublicKey = key.publicKey
                $0.pageSize = 2
                $0.notifyURL = receiver.url("/apple")
            }) { sim in
                let client = try Self.client(sim, key: key)
                let verifier = try SignedDataTests.verifier(roots: [try await sim.rootDER()])

                let vip = try await sim.purchase(type: "Auto-Renewable Subscription", productId: "com.example.vip.month")
                var expected = [vip.transactionId]
                for _ in 0..<3 {
                    expected.append(try #require(try await sim.event("DID_RENEW", vip.transactionId)["transactionId"] as? String))
                }
                try await sim.event("REFUND", expected[3])

                let info = try await client.getTransactionInfo(transactionId: expected[3])
                let refunded = try #require(await verifier.verifyTransaction(info.signedTransactionInfo).value)
                #expect(refunded.revocationDate != nil)

                let history = try await client.getTransactionHistory(transactionId: vip.transactionId)
                var ids: [String] = []
                for jws in history { ids.append(await verifier.verifyTransaction(jws).value?.transactionId ?? "") }
                #expect(ids == expected)

                let statuses = try await client.getAllSubscriptionStatuses(transactionId: vip.transactionId)
                #expect(statuses.data?.first?.lastTransactions?.first?.status == .revoked)

                let refunds = try await client.getRefundHistory(transactionId: vip.transactionId)
                #expect(refunds.count == 1)
                #expect(await verifier.verifyTransaction(refunds[0]).value?.transactionId == expected[3])

                let order = try await client.lookUpOrderId(vip.orderId)
                #expect(order.isValid)
                #expect(try await client.lookUpOrderId("NOSUCHORDER").isValid == false)

                let test = try await client.requestTestNotification()
                let testStatus = try await client.getTestNotificationStatus(token: test.testNotificationToken)
                #expect(await verifier.verifyNotification(testStatus.signedPayload ?? "").value?.payload.notificationType == .test)

                let now = Date()
                let notifications = try await client.getNotificationHistory(
                    NotificationHistoryRequest(
                        startDate: now.addingTimeInterval(-3600), endDate: now.addingTimeInterval(3600)))
                #expect(notifications.count == 6)

                try await client.sendConsumptionInformation(
                    transactionId: vip.transactionId, ConsumptionRequest(consumptionStatus: 1, deliveryStatus: 0))
                #expect(try await sim.get("/sim/consumption/\(vip.transactionId)").body["customerConsented"] as? Bool == true)

                do {
                    _ = try await client.getTransactionInfo(transactionId: "2999999999999999")
                    Issue.record("an unknown transaction must fail")
                } catch let error as AppStoreAPIError {
                    #expect(error.code == .notFound)
                    #expect(error.appleErrorCode == 4_040_010)
                }
            }
        }
    }

    @Test func aClientWithAnotherKeyIsUnauthorized() async throws {
        let settings: (inout SimConfiguration) -> Void = { $0.apiPublicKey = P256.Signing.PrivateKey().publicKey }
        try await SimHarness.with(settings) { sim in
            let purchase = try await sim.purchase()
            let client = try Self.client(sim, key: P256.Signing.PrivateKey())
            do {
                _ = try await client.getTransactionInfo(transactionId: purchase.transactionId)
                Issue.record("a token signed by another key must be refused")
            } catch let error as AppStoreAPIError {
                #expect(error.code == .unauthorized)
                #expect(error.httpStatus == 401)
            }
        }
    }
}
