import Ledger
import Pipeline
import Redis

/// What the ledger knows about one transaction, read for a `CONSUMPTION_REQUEST` through the ledger's key
/// contract (`Keys+Ledger`, `Keys+LedgerRecords`): the purchase chain's owner
/// (`tg:{otx:<originalTransactionId>}:owner`), the owner's transaction record (`tg:{u:<userId>}:tx:<transactionId>`;
/// present when Tollgate delivered it), the owner's coin balance (less granted coins still unspent) and whether the owner's consent to share
/// consumption data is recorded (`tg:{u:<userId>}:consent`).
struct LedgerView: Sendable {
    /// The user the purchase chain is bound to, when known.
    var owner: String?
    /// The owner's record of the transaction (empty when the ledger holds none).
    var record: [String: String] = [:]
    /// The owner's coin balance, less granted coins still unspent (`coins` − `coins.granted` of the account).
    var balance: Int64 = 0
    /// True only when the app's backend recorded the owner's consent (`consented` = `1`).
    var consented = false

    /// True when the ledger holds a record of the transaction (it was credited).
    var delivered: Bool { !record.isEmpty }

    /// The share of a delivered consumable the customer used, in milli-percent: the part of its credited coins
    /// no longer in the balance, `(credited − min(max(balance, 0), credited)) × 100000 / credited`, rounded down
    /// (a balance that still holds them all reports `0`). `nil` for other products or when nothing was credited.
    var consumedShare: Int? {
        guard record["type"] == "consumable", let credited = record["coins"].flatMap({ Int64($0) }), credited > 0 else {
            return nil
        }
        let remaining = min(max(balance, 0), credited)
        return Int((credited - remaining) * 100_000 / credited)
    }

    /// Reads the view from the ledger side `keys` name (the request's environment's); Redis errors propagate (the caller
    /// retries).
    static func read(
        on redis: any RedisCommandExecutor, keys: Keys, transactionId: String, originalTransactionId: String
    ) async throws -> LedgerView {
        guard let owner = try await redis.send("GET", key: keys.binding(originalTransactionId: originalTransactionId)).string,
            !owner.isEmpty
        else {
            return LedgerView(owner: nil)
        }
        var view = LedgerView(owner: owner)
        let items = try await redis.send("HGETALL", key: keys.transaction(user: owner, transactionId: transactionId)).array ?? []
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            if let name = items[index].string, let value = items[index + 1].string { view.record[name] = value }
        }
        // Granted coins (labelled grants, ``Ledger/LedgerGrants``) are not Apple's: the balance a consumption answer
        // counts leaves out those still unspent.
        let account = try await redis.send(RedisCommand("HMGET", key: keys.account(user: owner), "coins", "coins.granted")).array ?? []
        let coins = account.first?.string.flatMap { Int64($0) } ?? 0
        let granted = account.count > 1 ? account[1].string.flatMap { Int64($0) } ?? 0 : 0
        view.balance = coins - max(granted, 0)
        view.consented = try await redis.send("HGET", key: keys.consent(user: owner), "consented").string == "1"
        return view
    }
}
