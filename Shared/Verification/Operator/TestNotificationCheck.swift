package import AppStore
import Foundation
import Pipeline

/// What `tollctl apple test-notification` runs: Apple's Request a Test Notification, then Get Test Notification
/// Status every `interval` until Apple reports send attempts or `wait` has passed. The attempts show whether
/// Apple reached the App Store Server Notifications URL (ingest): `SUCCESS`, or why not. Each call takes its app's
/// fleet-wide token first (``OperatorAPI``).
package enum TestNotificationCheck {
    package struct Report: Sendable {
        /// The environment whose API was asked.
        package var environment: AppStoreEnvironment
        package var token: String
        /// The last status Apple gave; nil when the wait was zero.
        package var status: CheckTestNotificationResponse?

        /// Apple's send attempts so far.
        package var attempts: [SendAttemptItem] { status?.sendAttempts ?? [] }
        /// Some attempt reached the notifications URL.
        package var delivered: Bool { attempts.contains { $0.sendAttemptResult == "SUCCESS" } }
    }

    /// Asks the production API when the deployment has one, else sandbox. `onToken` sees the token as soon as
    /// Apple gives it (before the polling). A 404 status (Apple has not recorded the notification yet) is polled again.
    package static func run(
        api: OperatorAPI, wait: Duration, interval: Duration = .milliseconds(500),
        clock: ContinuousClock = ContinuousClock(), onToken: (String) -> Void = { _ in }
    ) async throws -> Report {
        guard let entry = api.ordered.first else { throw VerificationError.apiNotConfigured }
        let environment = entry.environment
        let token = try await api.call(.other, entry) { try await $0.requestTestNotification() }.testNotificationToken
        onToken(token)
        var report = Report(environment: environment, token: token)
        let deadline = clock.now + wait
        while wait > .zero {
            do {
                report.status = try await api.call(.other, entry) { try await $0.getTestNotificationStatus(token: token) }
            } catch let error as AppStoreAPIError where error.code == .notFound {
                report.status = nil
            }
            if !report.attempts.isEmpty || clock.now >= deadline { break }
            try await clock.sleep(for: min(interval, deadline - clock.now))
        }
        return report
    }
}
