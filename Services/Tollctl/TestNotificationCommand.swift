import AppStore
import ArgumentParser
import Foundation
import Logging
import Pipeline
import ServiceKit
import Verification

/// `tollctl apple test-notification [--wait SECONDS]`: asks Apple to send a TEST notification to the app's App
/// Store Server Notifications URL, prints the token, then polls its status until Apple reports send attempts
/// (`TestNotificationCheck`). Exit 0 when an attempt succeeded, 1 when none did (or none was reported in time).
struct TestNotificationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-notification",
        abstract: "Request a TEST notification from Apple and show whether it reached ingest.",
        discussion: """
            Needs the App Store Server API key (TOLLGATE_API_KEY_ID, TOLLGATE_API_ISSUER_ID, \
            TOLLGATE_API_PRIVATE_KEY_PATH), TOLLGATE_BUNDLE_ID and TOLLGATE_ENVIRONMENT, read as the verifier reads \
            them. Prints 'token <token>', then 'attempt <date> <result>' per send attempt Apple reports \
            (SUCCESS, TIMED_OUT, SSL_ISSUE …) and 'delivered' or 'not delivered'.
            """)

    @Option(help: "How long to poll Get Test Notification Status, in seconds (0: only request it).")
    var wait: Int = 30

    func validate() throws {
        guard (0...3600).contains(wait) else { throw ValidationError("--wait must be 0-3600 seconds") }
    }

    func run() async throws {
        let report = try await withOperatorAPI("test-notification") { api in
            try await TestNotificationCheck.run(api: api, wait: .seconds(wait)) { token in
                print("token \(token)")
            }
        }
        if wait == 0 { return }
        let formatter = ISO8601DateFormatter()
        for attempt in report.attempts {
            let date = attempt.attemptDate.map { formatter.string(from: Date(timeIntervalSince1970: Double($0) / 1000)) } ?? "-"
            print("attempt \(date) \(attempt.sendAttemptResult ?? "-")")
        }
        if report.delivered {
            print("delivered")
        } else {
            print(report.attempts.isEmpty ? "not delivered: Apple reported no send attempt within \(wait)s" : "not delivered")
            throw ExitCode(1)
        }
    }
}
