/// One page of Get Notification History: Apple's `NotificationHistoryResponse`.
package struct NotificationHistoryResponse: Codable, Sendable, Hashable {
    /// Pass back as the `paginationToken` query parameter to get the next page.
    package var paginationToken: String?
    package var hasMore: Bool?
    package var notificationHistory: [NotificationHistoryResponseItem]?

    package init(paginationToken: String? = nil, hasMore: Bool? = nil, notificationHistory: [NotificationHistoryResponseItem]? = nil) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}
