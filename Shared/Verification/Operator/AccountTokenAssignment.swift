package import AppStore
package import Core
import Ledger
package import Logging
import Pipeline
import Redis
import ServiceKit

/// What `tollctl apple set-account-token ORIGINAL_TRANSACTION_ID --user USER` runs: ties a purchase to a user through
/// Apple's Set App Account Token, with the user's own token (``AccountToken``), so that every transaction, renewal and
/// notification Apple signs about the purchase afterwards resolves to that user in the ledger.
///
/// Before Apple is asked to change anything:
/// 1. the transaction is fetched (Get Transaction Info; production first, then sandbox when Apple does not know it
///    there, or only the environment named) and verified like every JWS; it must be its purchase's original
///    transaction (`not_original_transaction_id`), since the ledger binds purchases by original transaction ID;
/// 2. the ledger must not bind the purchase to another user (`tg:{otx:<id>}:owner`), and, while it binds it to no
///    one, the token Apple already has on it must not map to another user (an order's token or someone's own):
///    `owned_by_another_user`, and nothing is written anywhere, so an operator's typo never hands one user's purchase
///    to another (a purchase bound to the user gets the user's token whatever stale token it carries);
/// 3. when the token Apple has already maps to the user, nothing changes (``Report/changed`` false).
///
/// Apple's answer is read back from the ledger: should a binding to another user have appeared while Apple was asked
/// (a notification applied at that moment), the command fails with `binding_changed` and says how to repair it.
///
/// Then the ledger binds the purchase: unless it already binds it to the user, Apple's transaction is fetched again
/// (it now carries the user's token), verified, and handed to the fulfiller as a `transaction` event with no user,
/// as the reconciler hands Apple's word on (``ReconcileFunctions/emit(on:keys:event:deploymentIsProduction:partition:nowMilliseconds:)``); the
/// fulfiller resolves it by the token to the user, binds the purchase, credits what was never credited, and applies
/// what was parked for it. The operator's word never reaches the ledger, only Apple's.
///
/// All of it happens in one project (docs/PROJECTS.md): only that project's apps are asked (their keys, their `bid`),
/// a transaction Apple signed for another project's app is refused `wrong_project`, and the bindings, tokens and users
/// read and written are that project's (``Keys/inProject(_:)``), so another project's user of the same id is never
/// seen or changed.
package enum AccountTokenAssignment {
    /// What was found and what changed.
    package struct Report: Sendable {
        /// The environment whose API knows the purchase.
        package var environment: AppStoreEnvironment
        package var originalTransactionId: String
        package var productId: String?
        package var user: String
        /// The token Apple had on the purchase before (nil: none).
        package var previousToken: String?
        /// The token the purchase carries now.
        package var token: String
        /// Whether this run created the user's own token.
        package var tokenCreated: Bool
        /// Whether Apple was asked to change the purchase (false: it already carried a token of the user's).
        package var changed: Bool
        /// The user the ledger binds the purchase to (nil: no one yet).
        package var boundTo: String?
        /// Whether the ledger holds anything of the user (an account, orders or an own token): false hints at a typo.
        package var userKnown: Bool
        /// The job that hands Apple's transaction, now carrying the user's token, to the ledger (nil: the ledger
        /// already bound the purchase to the user).
        package var handedOverJobId: String?
    }

    /// Runs the checks, then Set App Account Token, in `project`; every call to Apple under a token of its app's
    /// fleet-wide bucket (``OperatorAPI``): Get Transaction Info's class for the reads, `other` for the change.
    /// - Throws: ``VerificationError`` (`invalid_user`, `api_not_configured`, `environment_not_accepted`,
    ///   `transaction_not_verified`, `wrong_project`, `not_original_transaction_id`, `owned_by_another_user`,
    ///   `binding_changed`), the API client's ``AppStoreAPIError`` (Apple's refusals, each with its stable code),
    ///   ``RateLimitError``, Redis errors.
    package static func run(
        api: OperatorAPI, originalTransactionId: String, user: String, environment: AppStoreEnvironment? = nil,
        project: ProjectID = .default, logger: Logger
    ) async throws -> Report {
        let configuration = api.configuration
        guard UserID.isValid(user) else {
            throw VerificationError("invalid_user", "the user ID must be 1-128 ASCII letters, digits, '-', '_', '.' or '@'")
        }
        let signedData = api.signedData
        var clients = api.ordered(of: project)
        guard !clients.isEmpty else { throw OperatorClients.apiNotConfigured(in: project) }
        if let environment {
            clients = clients.filter { $0.environment == environment }
            guard !clients.isEmpty else {
                throw VerificationError(
                    "environment_not_accepted", "this deployment does not use Apple's \(environment.rawValue) environment")
            }
        }
        let (client, info) = try await api.firstFound(.transactionInfo, clients) { client in
            try await client.getTransactionInfo(transactionId: originalTransactionId)
        }
        let found = client.environment
        let transaction: JWSTransactionDecodedPayload
        switch await signedData.verifyTransaction(info.signedTransactionInfo) {
        case .verified(let value): transaction = value
        case .rejected(let failure), .retryable(let failure):
            throw VerificationError("transaction_not_verified", "\(failure.code.rawValue): \(failure.message)")
        }
        guard transaction.transactionId == originalTransactionId else {
            throw VerificationError(
                "transaction_not_verified", "Apple answered with transaction \(transaction.transactionId ?? "-")")
        }
        guard configuration.project(ofApp: transaction.bundleId) == project else {
            throw VerificationError(
                "wrong_project", "transaction \(originalTransactionId) is not of an app of project \(project); nothing was changed")
        }
        guard transaction.originalTransactionId == originalTransactionId else {
            throw VerificationError(
                "not_original_transaction_id",
                "\(originalTransactionId) is not an original transaction ID: its purchase's original transaction is "
                    + "\(transaction.originalTransactionId ?? "unknown"); nothing was changed")
        }

        let redis = api.redis
        let keys = configuration.shared.keys.inProject(project)
        let bindingKey = keys.binding(originalTransactionId: originalTransactionId)
        let boundTo = try await redis.send(RedisCommand("GET", key: bindingKey)).string
        if let boundTo, !UserID.same(boundTo, user) {
            throw VerificationError(
                "owned_by_another_user",
                "the ledger binds purchase \(originalTransactionId) to user \(boundTo), not \(user); nothing was changed")
        }
        let previous = transaction.appAccountToken?.lowercased()
        var report = Report(
            environment: found, originalTransactionId: originalTransactionId, productId: transaction.productId,
            user: user, previousToken: previous, token: previous ?? "", tokenCreated: false, changed: false,
            boundTo: boundTo, userKnown: try await userKnown(user, keys: keys, on: redis))
        if let previous, let owner = try await AccountToken.owner(of: previous, keys: keys, on: redis) {
            if UserID.same(owner.user, user) {
                if boundTo == nil {
                    report.handedOverJobId = try await handOver(
                        originalTransactionId, token: previous, user: user, api: api, client: client, keys: keys,
                        project: project)
                }
                return report
            }
            // Bound to no one, the purchase follows its token. Bound to the user, it is theirs whatever stale token of
            // someone else's it carries, and gets the user's own.
            if boundTo == nil {
                let order = owner.orderNo.map { " (order \($0))" } ?? ""
                throw VerificationError(
                    "owned_by_another_user",
                    "purchase \(originalTransactionId) carries appAccountToken \(previous), which maps to user "
                        + "\(owner.user)\(order), not \(user); nothing was changed")
            }
        }

        let (token, created) = try await AccountToken.getOrCreate(user: user, keys: keys, on: redis)
        report.token = token
        report.tokenCreated = created
        if token == previous { return report }
        try await api.call(.other, client) {
            try await $0.setAppAccountToken(
                originalTransactionId: originalTransactionId, UpdateAppAccountTokenRequest(appAccountToken: token))
        }
        report.changed = true
        logger.notice(
            "app account token set",
            metadata: ["transaction.original": "\(originalTransactionId)", "user": "\(user)", "environment": "\(found.rawValue)"])

        if let now = try await redis.send(RedisCommand("GET", key: bindingKey)).string, !UserID.same(now, user) {
            throw VerificationError(
                "binding_changed",
                "Apple now has user \(user)'s appAccountToken on purchase \(originalTransactionId), but meanwhile the "
                    + "ledger bound the purchase to user \(now); give it back with 'tollctl apple set-account-token "
                    + "\(originalTransactionId) --user \(now)'")
        }
        if boundTo == nil {
            report.handedOverJobId = try await handOver(
                originalTransactionId, token: token, user: user, api: api, client: client, keys: keys, project: project)
        }
        return report
    }

    /// Apple's transaction, fetched again and verified, to the fulfiller as an event with no user: it resolves by
    /// `token`, which maps to `user`, so the event goes to `user`'s partition. Returns the event's job ID.
    /// - Throws: `transaction_not_verified` when Apple's copy does not verify or does not carry `token` yet.
    private static func handOver(
        _ originalTransactionId: String, token: String, user: String, api: OperatorAPI, client: AppleAPIClients.Entry,
        keys: Keys, project: ProjectID
    ) async throws -> String {
        let environment = client.environment
        let deploymentIsProduction = api.configuration.environment == .production
        let redis = api.redis
        let info = try await api.call(.transactionInfo, client) { try await $0.getTransactionInfo(transactionId: originalTransactionId) }
        let transaction: PurchaseEventTransaction
        switch await api.signedData.verifyTransaction(info.signedTransactionInfo) {
        case .verified(let payload):
            guard payload.appAccountToken?.lowercased() == token, let converted = PurchaseEventTransaction(signed: payload) else {
                throw VerificationError(
                    "transaction_not_verified",
                    "Apple's copy of \(originalTransactionId) does not carry the token yet; run the command again to hand it over")
            }
            transaction = converted
        case .rejected(let failure), .retryable(let failure):
            throw VerificationError("transaction_not_verified", "\(failure.code.rawValue): \(failure.message)")
        }
        try await ReconcileFunctions.library.load(on: redis)
        let now = PipelineClock.system.nowMilliseconds()
        let partition = keys.partition(ofUser: user)
        var event = PurchaseEvent(
            jobId: keys.newJobID(partition: partition), kind: .transaction, source: .reconciler,
            environment: environment.rawValue, verifiedAt: now, transactions: [transaction])
        // The fulfiller applies it to the project whose apps Apple answered for (docs/PROJECTS.md).
        event.project = project.label
        try await ReconcileFunctions.emit(
            on: redis, keys: keys, event: event, deploymentIsProduction: deploymentIsProduction, partition: partition,
            nowMilliseconds: now)
        return event.jobId
    }

    /// Whether the ledger holds an account (either side), orders or an own token of `user`.
    private static func userKnown(_ user: String, keys: Keys, on redis: any RedisCommandExecutor) async throws -> Bool {
        let reply = try await redis.send(
            RedisCommand(
                "EXISTS",
                arguments: [
                    keys.account(user: user), keys.on(.sandbox).account(user: user), keys.orders(user: user),
                    keys.accountToken(user: user),
                ], keysAt: 0..<4))
        return (reply.int ?? 0) > 0
    }
}
