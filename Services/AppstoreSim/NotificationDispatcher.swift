import AppStore
import Foundation
import HTTPClient
import Logging
import ServiceLifecycle

/// Delivers V2 notifications to `SIM_NOTIFY_URL` in the background with Apple's retry schedule: the first
/// attempt at once, then retries 1, 12, 24, 48 and 72 hours after each failed attempt (divided by
/// `SIM_RETRY_SCALE`). A non-2xx answer, a timeout or a connection failure is a failed attempt. Every
/// attempt is recorded in the ``SimStore`` for Notification History.
///
/// Runs as a `Service`: on graceful shutdown it stops taking notifications and abandons pending retries.
final class NotificationDispatcher: Service {
    private let store: SimStore
    private let faults: FaultInjector
    private let transport: any HTTPTransport
    private let logger: Logger
    private let queue: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    init(store: SimStore, faults: FaultInjector, transport: any HTTPTransport = CurlTransport(), logger: Logger) {
        self.store = store
        self.faults = faults
        self.transport = transport
        self.logger = logger
        (queue, continuation) = AsyncStream.makeStream(of: String.self)
    }

    /// Queues a recorded notification for delivery; a no-op without `SIM_NOTIFY_URL`.
    func enqueue(_ notificationUUID: String) {
        guard store.configuration.notifyURL != nil else { return }
        continuation.yield(notificationUUID)
    }

    func run() async throws {
        await withDiscardingTaskGroup { group in
            for await uuid in queue.cancelOnGracefulShutdown() {
                group.addTask { await self.deliver(uuid) }
            }
            group.cancelAll()
        }
    }

    private func deliver(_ uuid: String) async {
        guard let url = store.configuration.notifyURL, let notification = store.notification(uuid) else { return }
        let body: Data
        do {
            body = try JSONBody.encoder().encode(["signedPayload": notification.signedPayload])
        } catch {
            return
        }
        let delays = store.configuration.retryDelays
        for attempt in 0...delays.count {
            guard !Task.isCancelled else { return }
            let result = await send(body, to: url, environment: notification.environment)
            let isLast = attempt == delays.count
            let delivery: SimNotification.Delivery = result.sendAttemptResult == "SUCCESS" ? .delivered : (isLast ? .failed : .pending)
            store.record(attempt: result, for: uuid, delivery: delivery)
            logger.debug(
                "notification attempt",
                metadata: [
                    "notification.uuid": "\(uuid)", "attempt": "\(attempt + 1)", "result": "\(result.sendAttemptResult)",
                ])
            if delivery != .pending { return }
            do {
                try await Task.sleep(for: delays[attempt])
            } catch {
                return
            }
        }
    }

    /// One attempt, classified as Apple's `SendAttemptResult`.
    private func send(_ body: Data, to url: URL, environment: AppStoreEnvironment) async -> SimSendAttempt {
        let attemptDate = store.nowMillis
        if let fault = faults.decide(.notifications, environment: environment, counter: "notifications") {
            if let delay = fault.delay { try? await Task.sleep(for: delay) }
            if let status = fault.status {
                return SimSendAttempt(attemptDate: attemptDate, sendAttemptResult: "UNSUCCESSFUL_HTTP_RESPONSE_CODE", httpStatus: status)
            }
            if fault.delay == nil {
                return SimSendAttempt(attemptDate: attemptDate, sendAttemptResult: "NO_RESPONSE")
            }
        }
        let request = HTTPTransportRequest(
            method: .post, url: url, headers: ["Content-Type": "application/json"], body: body,
            timeout: store.configuration.notifyTimeout)
        do {
            let response = try await transport.send(request)
            let result = (200...299).contains(response.status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
            return SimSendAttempt(attemptDate: attemptDate, sendAttemptResult: result, httpStatus: response.status)
        } catch let error as HTTPTransportError {
            let result: String
            switch error.code {
            case .timeout: result = "TIMED_OUT"
            case .tlsFailed: result = "TLS_ISSUE"
            case .connectionFailed: result = "SOCKET_ISSUE"
            case .invalidResponse: result = "INVALID_RESPONSE"
            case .failed: result = "OTHER"
            }
            return SimSendAttempt(attemptDate: attemptDate, sendAttemptResult: result)
        } catch {
            return SimSendAttempt(attemptDate: attemptDate, sendAttemptResult: "OTHER")
        }
    }
}
