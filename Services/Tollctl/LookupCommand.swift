import AppStore
import ArgumentParser
import Foundation
import Logging
import Verification

/// `tollctl lookup ORDER_ID`: the order ID from a customer's receipt email → Apple's transactions, each verified
/// by the verifier's rules → the user each one belongs to in the ledger (`OrderLookup`). Exit 1 when Apple does
/// not know the order (`invalid_order_id`) or when any transaction does not verify (shown as NOT VERIFIED, with
/// none of its claims).
struct LookupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Look up an order ID at Apple: its transactions, verified, and who owns them in the ledger.",
        discussion: """
            Needs the verifier's settings: the App Store Server API key (TOLLGATE_API_KEY_ID, TOLLGATE_API_ISSUER_ID, \
            TOLLGATE_API_PRIVATE_KEY_PATH), TOLLGATE_BUNDLE_ID, TOLLGATE_ENVIRONMENT, TOLLGATE_ROOT_CERTS …, and \
            TOLLGATE_REDIS_URL. Redis is only read. One line per transaction: transactionId, original, product, \
            purchased, revoked (when Apple revoked it), owner (or none: no user is bound to the purchase chain) and \
            the owner's ledger state.
            """)

    @Argument(help: "The order ID (from the customer's App Store receipt email).")
    var orderID: String

    func validate() throws {
        guard !orderID.isEmpty, orderID.count <= 64, !orderID.contains("/") else {
            throw ValidationError("ORDER_ID must be 1-64 characters, without '/'")
        }
    }

    func run() async throws {
        let configuration = try VerifierConfiguration(environment: ProcessInfo.processInfo.environment)
        configuration.shared.bootstrapLogging(ceiling: .warning)
        let report = try await OrderLookup.run(configuration: configuration, orderId: orderID, logger: Logger(label: "tollctl.lookup"))
        print("order \(report.orderId)  environment=\(report.environment.rawValue)  transactions=\(report.entries.count)")
        for (index, entry) in report.entries.enumerated() { print(Self.line(entry, number: index + 1)) }
        if report.unverified > 0 {
            StandardError.write("tollctl: \(report.unverified) of the order's transactions did not verify; do not trust them")
            throw ExitCode(1)
        }
    }

    static func line(_ entry: OrderLookup.Entry, number: Int) -> String {
        switch entry.result {
        case .rejected(let failure), .retryable(let failure):
            return "  #\(number)  NOT VERIFIED  \(failure.code): \(failure.message)"
        case .verified(let transaction):
            let formatter = ISO8601DateFormatter()
            func date(_ ms: Int64?) -> String {
                ms.map { formatter.string(from: Date(timeIntervalSince1970: Double($0) / 1000)) } ?? "-"
            }
            var parts = [
                "  \(transaction.transactionId ?? "-")", "verified", "original=\(transaction.originalTransactionId ?? "-")",
                "product=\(transaction.productId ?? "-")", "purchased=\(date(transaction.purchaseDate))",
            ]
            if let revoked = transaction.revocationDate {
                parts.append("revoked=\(date(revoked))")
                if let reason = transaction.revocationReason { parts.append("revocationReason=\(reason.rawValue)") }
            }
            parts.append("owner=\(entry.owner ?? "none")")
            if let record = entry.record { parts.append("ledger=\(record.state)") }
            return parts.joined(separator: "  ")
        }
    }
}
