package import Foundation
package import Pipeline
package import Redis

/// The customer API's look-ups (`GET /v1/transactions/{id}`, `GET /v1/lookup`, `tollctl lookup --transaction …`):
/// from a transaction, a purchase chain or an `appAccountToken` to the user who owns it and the transactions.
package enum CustomerLookup {
    /// An owner and the transactions of what was looked up.
    package struct Answer: Sendable {
        package var userId: String
        /// The order a token belongs to (nil for a chain, or a user's own token).
        package var orderNo: String?
        package var transactions: [TransactionRecord]
    }

    /// A transaction's record and owner, through the owner index (``Keys/transactionOwner(partition:transactionId:)``,
    /// asked of every partition), on whichever side of the owner's ledger holds it; nil when the ledger holds none.
    package static func transaction(
        _ transactionId: String, on redis: any RedisCommandExecutor, keys: Keys
    ) async throws -> (userId: String, record: TransactionRecord)? {
        let owners = try await redis.pipeline(
            keys.partitions.map { RedisCommand("GET", key: keys.transactionOwner(partition: $0, transactionId: transactionId)) })
        guard let owner = owners.lazy.compactMap(\.string).first(where: UserID.isValid) else { return nil }
        for side in LedgerSide.allCases {
            let reply = try await redis.send(
                RedisCommand("HGETALL", key: keys.on(side).transaction(user: owner, transactionId: transactionId)))
            if let record = TransactionRecord(hash: reply.fieldValues) { return (owner, record) }
        }
        return nil
    }

    /// A purchase chain's owner (its binding: the first user to claim it) and the owner's transactions of it, among
    /// their newest ``CustomerInfo/limit``; nil when no one owns it.
    package static func chain(_ originalTransactionId: String, on redis: any RedisCommandExecutor, keys: Keys) async throws -> Answer? {
        guard let owner = try await redis.send(RedisCommand("GET", key: keys.binding(originalTransactionId: originalTransactionId))).string,
            UserID.isValid(owner)
        else { return nil }
        let info = try await CustomerInfo.read(on: redis, keys: keys, user: owner)
        return Answer(
            userId: owner, orderNo: nil, transactions: info.allTransactions.filter { $0.originalTransactionId == originalTransactionId })
    }

    /// A token's owner (the order or user it maps to) and the transactions: an order's paying purchase chain, or
    /// every transaction for a user's own token (among the newest ``CustomerInfo/limit``); nil when it maps to no one.
    package static func token(_ token: UUID, on redis: any RedisCommandExecutor, keys: Keys) async throws -> Answer? {
        let mapping = try await redis.send(RedisCommand("HGETALL", key: keys.appAccountToken(token.uuidString.lowercased()))).fieldValues
        guard let owner = mapping[Order.TokenField.user], UserID.isValid(owner) else { return nil }
        let info = try await CustomerInfo.read(on: redis, keys: keys, user: owner)
        guard let order = mapping[Order.TokenField.orderNo] else {
            return Answer(userId: owner, orderNo: nil, transactions: info.allTransactions)
        }
        let paid = try await redis.send(RedisCommand("HGETALL", key: keys.order(user: owner, orderNo: order))).fieldValues[
            Order.Field.transaction]
        let chain = paid.flatMap { tid in info.allTransactions.first { $0.transactionId == tid }?.originalTransactionId }
        return Answer(userId: owner, orderNo: order, transactions: info.allTransactions.filter { $0.originalTransactionId == chain })
    }
}
