import AppStore
import AppStoreTesting
import Foundation
import Hummingbird

/// The simulator's own control API under `/sim`: purchases, events, faults, notifications, the root
/// certificate and health.
struct ControlRoutes: Sendable {
    let store: SimStore
    let faults: FaultInjector
    let dispatcher: NotificationDispatcher
    let rootDER: Data

    private static let healthBody = ByteBuffer(string: "ok\n")

    func register(on router: Router<BasicRequestContext>) {
        router.get("/sim/health") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: Self.healthBody))
        }
        router.get("/sim/root.der") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/pkix-cert"], body: .init(byteBuffer: ByteBuffer(bytes: rootDER)))
        }
        router.post("/sim/purchases") { request, context in
            await Self.respond { () async throws(SimError) in
                let body = try await JSONBody.decode(PurchaseRequest.self, from: request, context: context)
                return try purchase(body)
            }
        }
        router.post("/sim/events") { request, context in
            await Self.respond { () async throws(SimError) in
                let body = try await JSONBody.decode(EventRequest.self, from: request, context: context)
                return try event(body)
            }
        }
        router.post("/sim/sign") { request, context in
            await Self.respond { () async throws(SimError) in
                let body = try await JSONBody.decode(SignRequest.self, from: request, context: context)
                guard (1...1000).contains(body.count) else {
                    throw SimError(.badRequest, "invalid_count", "count must be 1-1000")
                }
                var signed: [String] = []
                for index in 0..<body.count {
                    do {
                        signed.append(try store.signer.sign(json: try body.payload(copy: index)))
                    } catch {
                        throw SimError(.internalServerError, "signing_failed", "\(error)")
                    }
                }
                return JSONBody.response(["jws": signed])
            }
        }
        router.post("/sim/faults") { request, context in
            await Self.respond { () async throws(SimError) in
                let body = try await JSONBody.decode(FaultRequest.self, from: request, context: context)
                return JSONBody.response(try faults.add(body), status: .created)
            }
        }
        router.get("/sim/faults") { _, _ in
            struct Body: Encodable {
                var faults: [FaultRule]
                var requests: [String: Int]
            }
            let snapshot = faults.snapshot()
            return JSONBody.response(Body(faults: snapshot.rules, requests: snapshot.requests))
        }
        router.delete("/sim/faults") { _, _ in
            faults.clear()
            return Response(status: .noContent)
        }
        router.get("/sim/notifications") { _, _ in
            JSONBody.response(["notifications": store.read { $0.notifications.map(NotificationView.init) }])
        }
        router.post("/sim/notifications/rescind-consent") { request, context in
            await Self.respond { () async throws(SimError) in
                let body = try await JSONBody.decode(RescindConsentRequest.self, from: request, context: context)
                return try rescindConsent(body)
            }
        }
        router.get("/sim/notifications/:uuid") { _, context in
            guard let uuid = context.parameters.get("uuid"), let notification = store.notification(uuid) else {
                return SimError(.notFound, "notification_not_found", "no such notification").response
            }
            return JSONBody.response(NotificationView(notification))
        }
        router.get("/sim/consumption/:transactionId") { _, context in
            let id = context.parameters.get("transactionId") ?? ""
            guard let body = store.read({ $0.consumptionInfo[id] }) else {
                return SimError(.notFound, "consumption_not_found", "no consumption information for \(id)").response
            }
            return JSONBody.response(data: body)
        }
    }

    /// Runs a handler, turning its `SimError` into the error response.
    static func respond(_ body: () async throws(SimError) -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            return error.response
        }
    }

    private func purchase(_ request: PurchaseRequest) throws(SimError) -> Response {
        struct Body: Encodable {
            var transactionId: String
            var originalTransactionId: String
            var environment: String
            var receipt: String
            var orderId: String
            var signedTransaction: String
            var signedRenewalInfo: String?
            var notificationUUID: String
            var signedPayload: String
            var deliveryStatus: String
        }
        let outcome = try store.purchase(request)
        dispatcher.enqueue(outcome.notification.notificationUUID)
        return JSONBody.response(
            Body(
                transactionId: outcome.transaction.transactionId,
                originalTransactionId: outcome.transaction.originalTransactionId,
                environment: outcome.transaction.environment.rawValue, receipt: outcome.receipt, orderId: outcome.orderId,
                signedTransaction: outcome.signedTransaction, signedRenewalInfo: outcome.signedRenewalInfo,
                notificationUUID: outcome.notification.notificationUUID, signedPayload: outcome.notification.signedPayload,
                deliveryStatus: outcome.notification.delivery.rawValue), status: .created)
    }

    private func rescindConsent(_ request: RescindConsentRequest) throws(SimError) -> Response {
        struct Body: Encodable {
            var notificationUUID: String
            var notificationType: String
            var environment: String
            var appTransactionId: String
            var signedPayload: String
            var deliveryStatus: String
        }
        let (notification, appTransactionId) = try store.withLedger { ledger, context throws(SimError) in
            try ledger.notifyRescindConsent(request, context: context)
        }
        dispatcher.enqueue(notification.notificationUUID)
        return JSONBody.response(
            Body(
                notificationUUID: notification.notificationUUID, notificationType: notification.type.rawValue,
                environment: notification.environment.rawValue, appTransactionId: appTransactionId,
                signedPayload: notification.signedPayload, deliveryStatus: notification.delivery.rawValue), status: .created)
    }

    private func event(_ request: EventRequest) throws(SimError) -> Response {
        struct Body: Encodable {
            var notificationUUID: String?
            var notificationType: String
            var subtype: String?
            var signedPayload: String?
            var deliveryStatus: String
            var transactionId: String
            var originalTransactionId: String
            var signedTransaction: String
        }
        let outcome = try store.apply(request)
        let notification = outcome.notification
        if let notification { dispatcher.enqueue(notification.notificationUUID) }
        return JSONBody.response(
            Body(
                notificationUUID: notification?.notificationUUID,
                notificationType: notification?.type.rawValue ?? request.type, subtype: notification?.subtype?.rawValue,
                signedPayload: notification?.signedPayload, deliveryStatus: notification?.delivery.rawValue ?? "not_sent",
                transactionId: outcome.transaction.transactionId,
                originalTransactionId: outcome.transaction.originalTransactionId,
                signedTransaction: outcome.signedTransaction))
    }
}
