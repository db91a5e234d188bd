import Foundation
import TestSupport
import Testing

@testable import AppStore

/// `AppStoreServerAPIClient` endpoints and paging against a local stub standing in for Apple.
@Suite struct ServerAPIEndpointTests {
    static func page(_ request: StubRecordedRequest, _ pages: [String?: String]) -> StubResponse {
        guard let body = pages[request.queryItem("revision") ?? request.queryItem("paginationToken")] else {
            return .json(#"{"errorCode": 4000030, "errorMessage": "Invalid revision."}"#, status: 400)
        }
        return .json(body)
    }

    @Test func transactionHistoryCollectsEveryPage() async throws {
        try await ServerAPIClientTests.withAPI { api in
            let path = "/inApps/v2/history/1000000001"
            await api.server.respond(to: path) { request in
                Self.page(
                    request,
                    [
                        nil:
                            #"{"revision": "r1", "hasMore": true, "bundleId": "com.example.tollgate", "environment": "Production", "signedTransactions": ["t1", "t2"]}"#,
                        "r1": #"{"revision": "r2", "hasMore": true, "signedTransactions": ["t3"]}"#,
                        "r2": #"{"revision": "r3", "hasMore": false, "signedTransactions": ["t4"]}"#,
                    ])
            }
            let query = TransactionHistoryQuery(sort: .ascending, productTypes: [.consumable, .autoRenewable])
            let transactions = try await api.client.getTransactionHistory(transactionId: "1000000001", query: query)
            #expect(transactions == ["t1", "t2", "t3", "t4"])
            let requests = await api.server.requests(to: path)
            #expect(requests.map { $0.queryItem("revision") } == [nil, "r1", "r2"])
            #expect(requests.allSatisfy { $0.queryItem("sort") == "ASCENDING" && $0.method == "GET" })
            #expect(requests.first?.query?.contains("productType=CONSUMABLE&productType=AUTO_RENEWABLE") == true)
        }
    }

    @Test func pagingWithoutANewTokenIsABadResponse() async throws {
        try await ServerAPIClientTests.withAPI { api in
            await api.server.respond(
                to: "/inApps/v2/history/7",
                with: [
                    .json(#"{"revision": "same", "hasMore": true, "signedTransactions": ["t1"]}"#)
                ])
            let error = await ServerAPIClientTests.apiError {
                _ = try await api.client.getTransactionHistory(transactionId: "7")
            }
            #expect(error?.code == .badResponse)
            #expect(error?.isRetryable == true)
            #expect(await api.server.requests(to: "/inApps/v2/history/7").count == 2)
        }
    }

    @Test func notificationHistoryCollectsEveryPage() async throws {
        try await ServerAPIClientTests.withAPI { api in
            let path = "/inApps/v1/notifications/history"
            await api.server.respond(to: path) { request in
                Self.page(
                    request,
                    [
                        nil:
                            #"{"paginationToken": "p1", "hasMore": true, "notificationHistory": [{"signedPayload": "n1", "sendAttempts": [{"attemptDate": 1698148900000, "sendAttemptResult": "NO_RESPONSE"}]}]}"#,
                        "p1":
                            #"{"paginationToken": "p2", "hasMore": false, "notificationHistory": [{"signedPayload": "n2"}, {"signedPayload": "n3"}]}"#,
                    ])
            }
            let start = Date(timeIntervalSince1970: 1_698_000_000)
            let request = NotificationHistoryRequest(
                startDate: start, endDate: start.addingTimeInterval(86_400), notificationType: .refund,
                onlyFailures: true, transactionId: "2000000002")
            let items = try await api.client.getNotificationHistory(request)
            #expect(items.map(\.signedPayload) == ["n1", "n2", "n3"])
            #expect(items.first?.sendAttempts?.first?.sendAttemptResult == "NO_RESPONSE")
            let requests = await api.server.requests(to: path)
            #expect(requests.map(\.method) == ["POST", "POST"])
            #expect(requests.map { $0.queryItem("paginationToken") } == [nil, "p1"])
            let body = try #require(requests.first?.jsonBody())
            #expect(body["startDate"]?.int == 1_698_000_000_000)
            #expect(body["endDate"]?.int == 1_698_086_400_000)
            #expect(body["notificationType"]?.string == "REFUND")
            #expect(body["onlyFailures"]?.bool == true)
            #expect(body["transactionId"]?.string == "2000000002")
        }
    }

    @Test func notificationHistoryRefusesAnEmptyRange() async throws {
        try await ServerAPIClientTests.withAPI { api in
            let now = Date()
            let error = await ServerAPIClientTests.apiError {
                _ = try await api.client.getNotificationHistory(NotificationHistoryRequest(startDate: now, endDate: now))
            }
            #expect(error?.code == .invalidRequest)
            #expect(await api.server.allRequests().isEmpty)
        }
    }

    @Test func refundHistoryCollectsEveryPage() async throws {
        try await ServerAPIClientTests.withAPI { api in
            let path = "/inApps/v2/refund/lookup/3000000003"
            await api.server.respond(to: path) { request in
                Self.page(
                    request,
                    [
                        nil: #"{"revision": "a", "hasMore": true, "signedTransactions": ["r1"]}"#,
                        "a": #"{"revision": "b", "hasMore": false, "signedTransactions": ["r2"]}"#,
                    ])
            }
            let refunds = try await api.client.getRefundHistory(transactionId: "3000000003")
            #expect(refunds == ["r1", "r2"])
            #expect(await api.server.requests(to: path).count == 2)
        }
    }

    @Test func subscriptionStatusesDecode() async throws {
        try await ServerAPIClientTests.withAPI { api in
            let path = "/inApps/v1/subscriptions/4000000004"
            await api.server.respond(
                to: path,
                with: [
                    .json(
                        #"""
                        {"environment": "Production", "bundleId": "com.example.tollgate", "appAppleId": 1234,
                         "data": [{"subscriptionGroupIdentifier": "sub_group_one",
                                   "lastTransactions": [{"status": 1, "originalTransactionId": "4000000004",
                                                         "signedTransactionInfo": "st", "signedRenewalInfo": "sr"}]}]}
                        """#)
                ])
            let statuses = try await api.client.getAllSubscriptionStatuses(transactionId: "4000000004", statuses: [.active])
            #expect(statuses.environment == .production)
            #expect(statuses.appAppleId == 1234)
            let last = try #require(statuses.data?.first?.lastTransactions?.first)
            #expect(last.status == .active)
            #expect(last.signedTransactionInfo == "st")
            #expect(last.signedRenewalInfo == "sr")
            #expect(await api.server.requests(to: path).first?.queryItem("status") == "1")
        }
    }

    @Test func testNotificationConsumptionAndOrderLookup() async throws {
        try await ServerAPIClientTests.withAPI { api in
            await api.server.respond(to: "/inApps/v1/notifications/test", with: [.json(#"{"testNotificationToken": "tok-1"}"#)])
            await api.server.respond(
                to: "/inApps/v1/notifications/test/tok-1",
                with: [
                    .json(#"{"signedPayload": "p.q.r", "sendAttempts": [{"attemptDate": 1, "sendAttemptResult": "SUCCESS"}]}"#)
                ])
            await api.server.respond(to: "/inApps/v1/transactions/consumption/5000000005", with: [StubResponse(status: 202)])
            await api.server.respond(to: "/inApps/v2/transactions/consumption/5000000006", with: [StubResponse(status: 202)])
            await api.server.respond(to: "/inApps/v1/lookup/MQKXY1Z9", with: [.json(#"{"status": 0, "signedTransactions": ["o1"]}"#)])

            let test = try await api.client.requestTestNotification()
            #expect(test.testNotificationToken == "tok-1")
            #expect(await api.server.requests(to: "/inApps/v1/notifications/test").first?.method == "POST")
            let status = try await api.client.getTestNotificationStatus(token: test.testNotificationToken)
            #expect(status.signedPayload == "p.q.r")

            try await api.client.sendConsumptionInformation(
                transactionId: "5000000005",
                ConsumptionRequest(consumptionStatus: 3, platform: 1, deliveryStatus: 0, refundPreference: 2))
            let put = try #require(await api.server.requests(to: "/inApps/v1/transactions/consumption/5000000005").first)
            #expect(put.method == "PUT")
            let body = try #require(put.jsonBody())
            #expect(body["customerConsented"]?.bool == true)
            #expect(body["consumptionStatus"]?.int == 3)
            #expect(body["refundPreference"]?.int == 2)
            #expect(body["appAccountToken"]?.string == "")

            try await api.client.sendConsumptionInformation(
                transactionId: "5000000006",
                ConsumptionRequestV2(
                    customerConsented: true, consumptionPercentage: 40_000, deliveryStatus: .delivered,
                    refundPreference: .grantProrated))
            let v2 = try #require(await api.server.requests(to: "/inApps/v2/transactions/consumption/5000000006").first)
            #expect(v2.method == "PUT")
            let v2Body = try #require(v2.jsonBody())
            #expect(v2Body["customerConsented"]?.bool == true)
            #expect(v2Body["consumptionPercentage"]?.int == 40_000)
            #expect(v2Body["deliveryStatus"]?.string == "DELIVERED")
            #expect(v2Body["refundPreference"]?.string == "GRANT_PRORATED")
            #expect(v2Body["sampleContentProvided"]?.bool == false)

            let order = try await api.client.lookUpOrderId("MQKXY1Z9")
            #expect(order.isValid)
            #expect(order.signedTransactions == ["o1"])
        }
    }

    /// Set App Account Token: a PUT of `{"appAccountToken"}` answered 200 with no body; Apple's refusals of this
    /// endpoint each have a stable code, none retryable.
    @Test func setAppAccountTokenPutsTheTokenAndNamesApplesRefusals() async throws {
        try await ServerAPIClientTests.withAPI { api in
            let token = "7389a31a-fb6d-4569-a2a6-db7d85d84813"
            await api.server.respond(to: "/inApps/v1/transactions/2000000001/appAccountToken", with: [StubResponse(status: 200)])
            try await api.client.setAppAccountToken(
                originalTransactionId: "2000000001", UpdateAppAccountTokenRequest(appAccountToken: token))
            let put = try #require(await api.server.requests(to: "/inApps/v1/transactions/2000000001/appAccountToken").first)
            #expect(put.method == "PUT")
            #expect(put.headers["content-type"] == "application/json")
            let body = try #require(put.jsonBody())
            #expect(body.count == 1 && body["appAccountToken"]?.string == token, "\(body)")

            let refusals: [(String, Int, Int, AppStoreAPIError.Code)] = [
                ("2000000002", 400, 4_000_183, .invalidAppAccountToken),
                ("2000000003", 400, 4_000_185, .familyTransactionNotSupported),
                ("2000000004", 400, 4_000_187, .notOriginalTransactionId),
                ("2000000005", 404, 4_040_010, .notFound),
                ("2000000006", 400, 4_000_006, .requestRejected),
            ]
            for (id, status, appleCode, _) in refusals {
                await api.server.respond(
                    to: "/inApps/v1/transactions/\(id)/appAccountToken",
                    with: [.json(#"{"errorCode": \#(appleCode), "errorMessage": "Invalid request."}"#, status: status)])
            }
            for (id, _, appleCode, code) in refusals {
                let error = try #require(
                    await ServerAPIClientTests.apiError {
                        try await api.client.setAppAccountToken(
                            originalTransactionId: id, UpdateAppAccountTokenRequest(appAccountToken: token))
                    })
                #expect(error.code == code, "Apple error \(appleCode)")
                #expect(error.appleErrorCode == appleCode)
                #expect(!error.isRetryable)
            }
            #expect(AppStoreAPIError.Code.invalidAppAccountToken.rawValue == "api_invalid_app_account_token")
            #expect(AppStoreAPIError.Code.familyTransactionNotSupported.rawValue == "api_family_transaction_not_supported")
            #expect(AppStoreAPIError.Code.notOriginalTransactionId.rawValue == "api_not_original_transaction_id")
        }
    }
}
