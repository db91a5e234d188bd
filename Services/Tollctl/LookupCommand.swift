import AppStore
import ArgumentParser
import Core
import Foundation
import Ledger
import Logging
import Pipeline
import ServiceKit
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
            the owner's ledger state. With --project, only that project's apps are asked and owners are read from its \
            ledger (docs/PROJECTS.md); a transaction of another project's app shows as NOT VERIFIED wrong_project.
            """)

    @Argument(help: "The order ID (from the customer's App Store receipt email).")
    var orderID: String?

    @Option(help: "Look up a transaction in the ledger instead: its record and owner.")
    var transaction: String?

    @Option(help: "Look up a purchase chain (original transaction ID) in the ledger: its owner and transactions.")
    var original: String?

    @Option(help: "Look up an appAccountToken in the ledger: its owner, order and transactions.")
    var token: String?

    @OptionGroup var project: ProjectOption

    @Flag(help: "With --transaction, --original or --token: print the customer API's JSON.")
    var json = false

    func validate() throws {
        let given = [orderID, transaction, original, token].compactMap { $0 }
        guard given.count == 1 else { throw ValidationError("give one of ORDER_ID, --transaction, --original, --token") }
        if let orderID, orderID.isEmpty || orderID.count > 64 || orderID.contains("/") {
            throw ValidationError("ORDER_ID must be 1-64 characters, without '/'")
        }
        if let id = transaction ?? original, !PlainIdentifier.isValid(id) {
            throw ValidationError("a transaction ID is 1-64 letters, digits, '.', '-' or '_'")
        }
        if let token, UUID(uuidString: token) == nil { throw ValidationError("--token must be a UUID") }
    }

    func run() async throws {
        guard let orderID else { return try await ledgerLookup() }
        let project = try self.project.resolve()
        let report = try await withOperatorAPI("lookup") { api in
            try await OrderLookup.run(api: api, orderId: orderID, project: project)
        }
        print("order \(report.orderId)  environment=\(report.environment.rawValue)  transactions=\(report.entries.count)")
        for (index, entry) in report.entries.enumerated() { print(Self.line(entry, number: index + 1)) }
        if report.unverified > 0 {
            StandardError.write("tollctl: \(report.unverified) of the order's transactions did not verify; do not trust them")
            throw ExitCode(1)
        }
    }

    /// The ledger's look-ups (``CustomerLookup``), as `GET /v1/transactions/{id}` and `GET /v1/lookup` answer them.
    func ledgerLookup() async throws {
        let project = try self.project.resolve()
        try await UserLedgerConnection.with { redis, allKeys in
            let keys = allKeys.inProject(project)
            var writer = JSONWriter()
            let records: [TransactionRecord]
            if let transaction {
                guard let (owner, record) = try await CustomerLookup.transaction(transaction, on: redis, keys: keys) else {
                    throw ToolError("not_found", "the ledger holds no transaction \(transaction)")
                }
                writer.beginObject()
                writer.member("userId", owner)
                writer.key("transaction")
                CustomerInfo.write(record, to: &writer)
                writer.endObject()
                if !json { print("owner \(owner)") }
                records = [record]
            } else {
                let answer =
                    if let original { try await CustomerLookup.chain(original, on: redis, keys: keys) } else {
                        try await CustomerLookup.token(UUID(uuidString: token ?? "") ?? UUID(), on: redis, keys: keys)
                    }
                guard let answer else { throw ToolError("not_found", "no user owns it in the ledger") }
                writer.beginObject()
                writer.member("userId", answer.userId)
                writer.member("orderNo", answer.orderNo)
                writer.array("transactions", answer.transactions) { CustomerInfo.write($0, to: &$1) }
                writer.endObject()
                if !json { print("owner \(answer.userId)" + (answer.orderNo.map { "  order \($0)" } ?? "")) }
                records = answer.transactions
            }
            if json { return print(String(decoding: writer.bytes, as: UTF8.self)) }
            print("transactions \(records.count)")
            for record in records.reversed() { print(UserCommand.line(record)) }
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
