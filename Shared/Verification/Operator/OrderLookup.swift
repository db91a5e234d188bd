package import AppStore
package import Core
import Foundation
package import Ledger
import Pipeline
import Redis
import ServiceKit

/// What `tollctl lookup ORDER_ID` runs: Apple's Look Up Order ID, every returned transaction verified by the
/// verifier's own `SignedDataVerifier` (its settings: roots, bundle ID, environment, app Apple ID), and the owner
/// each verified purchase chain is bound to in the ledger (`tg:{otx:<originalTransactionId>}:owner`, with the
/// owner's transaction record). A transaction that does not verify is reported with its failure and nothing of it
/// is read from the ledger. Redis is only read.
///
/// One project's (docs/PROJECTS.md): only its apps are asked, owners are read from its ledger
/// (``Keys/inProject(_:)``), and a transaction Apple signed for another project's app is shown as not verified
/// (`wrong_project`), nothing of it read, so no other project's user is ever shown.
package enum OrderLookup {
    /// One transaction of the order.
    package struct Entry: Sendable {
        /// The verified transaction, or why it is not genuine.
        package var result: VerificationResult<JWSTransactionDecodedPayload>
        /// The user the purchase chain is bound to; nil when no one is (or the transaction did not verify).
        package var owner: String?
        /// The owner's record of this transaction (`state` and the rest), when the ledger has one.
        package var record: TransactionRecord?
    }

    /// The order as Apple and the ledger know it.
    package struct Report: Sendable {
        package var orderId: String
        /// The environment whose API answered.
        package var environment: AppStoreEnvironment
        package var entries: [Entry]

        /// Transactions that did not verify.
        package var unverified: Int { entries.count { $0.result.value == nil } }
    }

    /// Asks each environment the deployment accepts (production first) until one knows the order, each call under a
    /// token of its app's fleet-wide bucket (``OperatorAPI``).
    /// Throws ``VerificationError`` `api_not_configured` without an API key, `invalid_order_id` when Apple answers
    /// status 1 in every environment; ``RateLimitError``; the API client's errors otherwise.
    package static func run(api: OperatorAPI, orderId: String, project: ProjectID = .default) async throws -> Report {
        let configuration = api.configuration
        let clients = api.ordered(of: project)
        guard !clients.isEmpty else { throw OperatorClients.apiNotConfigured(in: project) }
        var found: (AppStoreEnvironment, [String])?
        for entry in clients {
            let response = try await api.call(.other, entry) { try await $0.lookUpOrderId(orderId) }
            if response.isValid {
                found = (entry.environment, response.signedTransactions ?? [])
                break
            }
        }
        guard let (environment, signed) = found else {
            throw VerificationError(
                "invalid_order_id",
                "Apple does not know order ID \(orderId) (Look Up Order ID answered status 1 in \(clients.map { $0.environment.rawValue }.joined(separator: ", ")))"
            )
        }
        var entries: [Entry] = []
        for jws in signed {
            var result = await api.signedData.verifyTransaction(jws)
            if let transaction = result.value, configuration.project(ofApp: transaction.bundleId) != project {
                result = .rejected(VerificationFailure(.wrongProject, "the transaction is of an app outside project \(project)"))
            }
            entries.append(Entry(result: result))
        }
        guard entries.contains(where: { $0.result.value != nil }) else {
            return Report(orderId: orderId, environment: environment, entries: entries)
        }
        let redis = api.redis
        // The ledger side this environment's purchases are kept on (``LedgerSide``).
        let keys = configuration.shared.keys.inProject(project).on(
            LedgerSide.of(environment: environment.rawValue, deploymentIsProduction: configuration.environment == .production))
        for index in entries.indices {
            guard let transaction = entries[index].result.value, let original = transaction.originalTransactionId else { continue }
            let owner = try await redis.send(RedisCommand("GET", key: keys.binding(originalTransactionId: original))).string
            entries[index].owner = owner
            if let owner, let id = transaction.transactionId {
                entries[index].record = TransactionRecord(hash: try await redis.hgetall(keys.transaction(user: owner, transactionId: id)))
            }
        }
        return Report(orderId: orderId, environment: environment, entries: entries)
    }
}
