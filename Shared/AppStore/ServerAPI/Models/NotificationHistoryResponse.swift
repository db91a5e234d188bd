/// One page of Get Notification History: Apple's `NotificationHistoryResponse`.
public struct NotificationHistoryResponse: Codable, Sendable, Hashable {
    /// Pass back as the `paginationToken` query parameter to get the next page.
    public var paginationToken: String?
    public var hasMore: Bool?
    public var notificationHistory: [NotificationHistoryResponseItem]?

    public init(paginationToken: String? = nil, hasMore: Bool? = nil, notificationHistory: [NotificationHistoryResponseItem]? = nil) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}
