import Ledger
import Pipeline
import Redis

/// What the ledger knows about one transaction, read for a `CONSUMPTION_REQUEST` through the ledger's key
/// contract (`Keys+Ledger`, `Keys+LedgerRecords`): the purchase chain's owner
/// (`tg:{otx:<originalTransactionId>}:owner`) and whether the owner's transaction record
/// (`tg:{u:<userId>}:tx:<transactionId>`) exists, i.e. whether Tollgate delivered it.
struct LedgerView: Sendable {
    /// The user the purchase chain is bound to, when known.
    var owner: String?
    /// True when the ledger holds a record of the transaction (it was credited).
    var delivered: Bool

    /// Reads the view; Redis errors propagate (the caller retries).
    static func read(
        on redis: any RedisCommandExecutor, keys: Keys, transactionId: String, originalTransactionId: String
    ) async throws -> LedgerView {
        guard let owner = try await redis.send("GET", keys.binding(originalTransactionId: originalTransactionId)).string,
            !owner.isEmpty
        else {
            return LedgerView(owner: nil, delivered: false)
        }
        let exists = try await redis.send("EXISTS", keys.transaction(user: owner, transactionId: transactionId)).int ?? 0
        return LedgerView(owner: owner, delivered: exists == 1)
    }
}
