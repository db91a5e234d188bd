import Foundation
import HTTPClient

extension AppStoreServerAPIClient {
    /// Get Notification History, every page: `POST /inApps/v1/notifications/history?paginationToken=…`.
    /// Apple keeps 180 days; `startDate` must be before `endDate`.
    package func getNotificationHistory(_ request: NotificationHistoryRequest) async throws -> [NotificationHistoryResponseItem] {
        try await collectRevisions("notification history") { token in
            let page = try await self.getNotificationHistoryPage(request, paginationToken: token)
            return (page.notificationHistory ?? [], page.hasMore ?? false, page.paginationToken)
        }
    }

    /// One page of Get Notification History.
    package func getNotificationHistoryPage(
        _ request: NotificationHistoryRequest, paginationToken: String? = nil
    ) async throws -> NotificationHistoryResponse {
        guard request.startDate < request.endDate else {
            throw AppStoreAPIError(.invalidRequest, "the notification history startDate must be before endDate", isRetryable: false)
        }
        let items = paginationToken.map { [URLQueryItem(name: "paginationToken", value: $0)] } ?? []
        return try await call(
            .post, "/inApps/v1/notifications/history", query: items, body: try encode(request),
            as: NotificationHistoryResponse.self)
    }

    /// Request a Test Notification: `POST /inApps/v1/notifications/test`.
    package func requestTestNotification() async throws -> SendTestNotificationResponse {
        try await call(.post, "/inApps/v1/notifications/test", as: SendTestNotificationResponse.self)
    }

    /// Get Test Notification Status: `GET /inApps/v1/notifications/test/{testNotificationToken}`.
    package func getTestNotificationStatus(token: String) async throws -> CheckTestNotificationResponse {
        let id = try segment(token, "test notification token")
        return try await call(.get, "/inApps/v1/notifications/test/\(id)", as: CheckTestNotificationResponse.self)
    }

    /// Send Consumption Information V1: `PUT /inApps/v1/transactions/consumption/{transactionId}`; Apple
    /// answers `202 Accepted` with no body.
    package func sendConsumptionInformation(transactionId: String, _ request: ConsumptionRequest) async throws {
        let id = try segment(transactionId, "transaction ID")
        try await send(.put, "/inApps/v1/transactions/consumption/\(id)", body: try encode(request))
    }

    /// Send Consumption Information (v2): `PUT /inApps/v2/transactions/consumption/{transactionId}`; Apple
    /// answers `202 Accepted` with no body.
    package func sendConsumptionInformation(transactionId: String, _ request: ConsumptionRequestV2) async throws {
        let id = try segment(transactionId, "transaction ID")
        try await send(.put, "/inApps/v2/transactions/consumption/\(id)", body: try encode(request))
    }
}
