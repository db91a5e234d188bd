import AppStore
import ArgumentParser
import Logging
import Pipeline
import Verification

/// `tollctl apple set-account-token ORIGINAL_TRANSACTION_ID --user USER`: Set App Account Token with the user's own
/// token, after the ledger's checks (`AccountTokenAssignment`).
struct SetAccountTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-account-token", abstract: "Tie a purchase to a user at Apple (Set App Account Token).",
        discussion: """
            For a purchase made outside the app (an offer code redeemed in the App Store) or carrying no token Tollgate \
            knows: Apple then signs the purchase, its renewals and their notifications with the user's own \
            appAccountToken, which the ledger maps to the user. Refused (exit 1, nothing changed) when the ledger binds \
            the purchase to another user, or to no one while its token maps to another user (owned_by_another_user), and \
            for a transaction ID that is not the purchase's original one (not_original_transaction_id); Apple's \
            refusals end with their own codes (api_family_transaction_not_supported, api_not_found …). Prints the \
            environment, the purchase, who the ledger binds it to, and 'changed appAccountToken OLD -> NEW' or \
            'unchanged'. Unless the ledger already binds the purchase to the user, Apple's transaction (now carrying the \
            token) is then handed to the fulfiller, which binds the purchase to the user, credits what was never \
            credited and applies what was parked for it. Needs the verifier's settings (the App Store Server API key …) and TOLLGATE_REDIS_URL. \
            With --project, only that project's apps are asked and only its ledger is read and changed (docs/PROJECTS.md); \
            a purchase of another project's app is refused (wrong_project, or Apple's api_not_found).
            """)

    @Argument(help: "The purchase's original transaction ID.")
    var originalTransactionId: String

    @Option(help: "The user the purchase belongs to.")
    var user: String

    @Option(help: "production or sandbox (default: production, then sandbox when Apple does not know the transaction).")
    var environment: String?

    @OptionGroup var project: ProjectOption

    func validate() throws {
        guard (1...32).contains(originalTransactionId.count), originalTransactionId.allSatisfy({ $0.isASCII && $0.isNumber })
        else { throw ValidationError("ORIGINAL_TRANSACTION_ID must be 1-32 digits") }
        guard UserID.isValid(user) else {
            throw ValidationError("--user must be 1-128 ASCII letters, digits, '-', '_', '.' or '@'")
        }
        if let environment { _ = try parsedEnvironment(environment) }
    }

    func run() async throws {
        let environment = try self.environment.map(parsedEnvironment)
        let project = try self.project.resolve()
        let report = try await withOperatorAPI("account-token") { api in
            try await AccountTokenAssignment.run(
                api: api, originalTransactionId: originalTransactionId, user: user, environment: environment, project: project,
                logger: Logger(label: "tollctl.set-account-token"))
        }
        print("environment \(report.environment.rawValue)")
        print("purchase \(report.originalTransactionId) product \(report.productId ?? "-")")
        print("ledger bound to \(report.boundTo ?? "no one yet")")
        if report.changed {
            let origin = "user \(report.user)'s own token, \(report.tokenCreated ? "created now" : "existing")"
            print("changed appAccountToken \(report.previousToken ?? "none") -> \(report.token) (\(origin))")
        } else {
            print("unchanged appAccountToken \(report.token) already maps to user \(report.user)")
        }
        if let job = report.handedOverJobId {
            print("handed Apple's transaction to the ledger as job \(job): the fulfiller binds the purchase to \(report.user)")
        }
        if !report.userKnown {
            StandardError.write("tollctl: note: the ledger had nothing of user \(report.user) before; check the user ID")
        }
    }
}
