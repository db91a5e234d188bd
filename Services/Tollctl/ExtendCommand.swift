import AppStore
import ArgumentParser
import Foundation
import Verification

/// `tollctl apple extend ORIGINAL_TRANSACTION_ID --days N`: Extend a Subscription Renewal Date.
struct ExtendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend", abstract: "Extend one subscription's renewal date at Apple.",
        discussion: """
            Apple then sends RENEWAL_EXTENDED, from which the ledger extends the entitlement. Prints the environment, \
            the request id and the new renewal date; exit 1 when Apple refuses (ineligible, two extensions a year). \
            With --project, only that project's apps are asked (docs/PROJECTS.md).
            """)

    @Argument(help: "The subscription's original transaction ID.")
    var originalTransactionId: String

    @OptionGroup var options: ExtensionOptions

    @OptionGroup var project: ProjectOption

    func run() async throws {
        let request = ExtendRenewalDateRequest(
            extendByDays: options.days, extendReasonCode: options.reason, requestIdentifier: options.identifier)
        let project = try self.project.resolve()
        let (environment, answer) = try await withOperatorAPI("extend") { api in
            try await SubscriptionExtensions.extend(
                api: api, originalTransactionId: originalTransactionId, request: request, project: project)
        }
        print("environment \(environment.rawValue)")
        print("request \(request.requestIdentifier)")
        print("success \(answer.success == true) renews \(answerDate(answer.effectiveDate))")
        if answer.success != true { throw ExitCode(1) }
    }
}
