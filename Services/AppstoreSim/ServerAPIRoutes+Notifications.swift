import AppStore
import Foundation
import Hummingbird

extension ServerAPIRoutes {
    private struct AttemptItem: Encodable {
        var attemptDate: Int64
        var sendAttemptResult: String
    }
    private struct HistoryItem: Encodable {
        var signedPayload: String
        var sendAttempts: [AttemptItem]
    }

    /// Get Notification History: notifications of this app and environment signed between `startDate`
    /// and `endDate` (at most 180 days back), oldest first, with their send attempts; `onlyFailures` keeps
    /// those never delivered.
    func notificationHistory(body: ByteBuffer?, paginationToken: String?, bid: String, environment: AppStoreEnvironment)
        throws(APIErrorBody) -> Response
    {
        struct Body: Encodable {
            var notificationHistory: [HistoryItem]
            var hasMore: Bool
            var paginationToken: String?
        }
        let request = try Self.historyRequest(body)
        let start = Self.millis(request.startDate)
        let end = Self.millis(request.endDate)
        guard start <= end else { throw .startAfterEnd }
        let now = store.nowMillis
        guard start >= now - 180 * 86_400_000 else { throw .startTooFarInPast }
        if request.notificationType != nil && request.transactionId != nil {
            throw APIErrorBody(errorCode: 4_000_019, errorMessage: "Multiple filters supplied.", status: .badRequest)
        }
        let type = request.notificationType
        if case .unknown? = type {
            throw APIErrorBody(errorCode: 4_000_018, errorMessage: "Invalid notification type.", status: .badRequest)
        }
        let subtype = request.notificationSubtype
        var offset = 0
        if let paginationToken, !paginationToken.isEmpty {
            guard let value = PageToken.decode(paginationToken, kind: "n") else { throw .invalidPaginationToken }
            offset = value
        }
        let pageSize = store.configuration.pageSize
        return try withLedger { ledger, _ throws(APIErrorBody) in
            var originals: Set<String>?
            if let id = request.transactionId {
                let transaction = try lookup(id, in: ledger, bid: bid, environment: environment)
                originals = Set(ledger.customerTransactions(of: transaction).map(\.originalTransactionId))
            }
            let matching = ledger.notifications.filter { notification in
                guard notification.bundleId == bid, notification.environment == environment,
                    notification.signedDate >= start, notification.signedDate < end
                else { return false }
                if let type, notification.type != type { return false }
                if let subtype, notification.subtype != subtype { return false }
                if let originals, !originals.contains(notification.originalTransactionId ?? "") { return false }
                if request.onlyFailures == true, notification.attempts.contains(where: { $0.sendAttemptResult == "SUCCESS" }) {
                    return false
                }
                return true
            }
            let page = matching.dropFirst(offset).prefix(pageSize)
            let next = offset + page.count
            let items = page.map { notification in
                HistoryItem(
                    signedPayload: notification.signedPayload,
                    sendAttempts: notification.attempts.map {
                        AttemptItem(attemptDate: $0.attemptDate, sendAttemptResult: $0.sendAttemptResult)
                    })
            }
            let hasMore = next < matching.count
            return JSONBody.response(
                Body(
                    notificationHistory: items, hasMore: hasMore, paginationToken: hasMore ? PageToken.encode(next, kind: "n") : nil))
        }
    }

    /// Request a Test Notification: records and sends a `TEST` notification; `{"testNotificationToken"}`.
    func requestTestNotification(bid: String, environment: AppStoreEnvironment) throws(APIErrorBody) -> Response {
        guard store.configuration.notifyURL != nil else { throw .serverNotificationURLNotFound }
        let notification = try withLedger { ledger, context throws(APIErrorBody) in
            do {
                return try ledger.notifyTest(environment: environment, bundleId: bid, context: context)
            } catch {
                throw .generalInternalRetryable
            }
        }
        dispatcher.enqueue(notification.notificationUUID)
        return JSONBody.response(["testNotificationToken": notification.testNotificationToken ?? ""])
    }

    /// The body of Get Notification History, in the shared model; a missing (or null) `startDate` or `endDate` is
    /// Apple's `4000015` or `4000016`, any other body it cannot read `4000000`.
    private static func historyRequest(_ body: ByteBuffer?) throws(APIErrorBody) -> NotificationHistoryRequest {
        guard let body else { throw .badRequest }
        do {
            return try JSONDecoder().decode(NotificationHistoryRequest.self, from: Data(body.readableBytesView))
        } catch {
            let missing: (any CodingKey)? =
                switch error {
                case DecodingError.keyNotFound(let key, _): key
                case DecodingError.valueNotFound(_, let context): context.codingPath.last
                default: nil
                }
            switch missing.flatMap({ NotificationHistoryRequest.CodingKeys(stringValue: $0.stringValue) }) {
            case .startDate?: throw .invalidStartDate
            case .endDate?: throw .invalidEndDate
            default: throw .badRequest
            }
        }
    }

    /// Milliseconds since 1970, as the request carried them.
    private static func millis(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Get Test Notification Status: `{"signedPayload", "sendAttempts"}`.
    func testNotificationStatus(token: String?, bid: String, environment: AppStoreEnvironment) throws(APIErrorBody) -> Response {
        struct Body: Encodable {
            var signedPayload: String
            var sendAttempts: [AttemptItem]
        }
        guard let token, !token.isEmpty, token.count <= 128 else { throw .invalidTestNotificationToken }
        let found = store.read { ledger in
            ledger.notifications.last { $0.testNotificationToken == token && $0.bundleId == bid && $0.environment == environment }
        }
        guard let found else { throw .testNotificationNotFound }
        return JSONBody.response(
            Body(
                signedPayload: found.signedPayload,
                sendAttempts: found.attempts.map { AttemptItem(attemptDate: $0.attemptDate, sendAttemptResult: $0.sendAttemptResult) }))
    }
}
