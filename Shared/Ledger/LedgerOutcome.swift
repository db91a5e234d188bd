/// What one ledger function call did with one verified event (the function's JSON answer).
package struct LedgerOutcome: Sendable, Hashable, Codable {
    /// One transaction's result.
    package struct TransactionResult: Sendable, Hashable, Codable {
        package var transactionId: String
        package var productId: String
        /// `applied`, `duplicate`, `updated`, `refunded`, `applied_refunded`, `refund_reversed`,
        /// `owned_by_another_user` or `unknown_product`.
        package var result: String
    }

    /// What the call did (``Kind``).
    package var outcome: Kind
    /// The rejection reason: `product_mismatch`, `owned_by_another_user`, `unknown_product`, `unknown_order`,
    /// `wrong_order` (the transaction was bought with another of the user's orders' token),
    /// `transaction_already_used` (the transaction already paid another order).
    package var reason: String?
    /// The user's coin balance after the call.
    package var coins: Int64?
    /// Events moved back from the parked list to the verified stream by a new binding.
    package var unparked: Int?
    /// 1 when transactions of other owners were forwarded to them as a new verified-stream entry.
    package var forwarded: Int?
    package var transactions: [TransactionResult]?
    /// `notification` when a V2 notification about no purchase went to the events stream as an app-level entry.
    package var emitted: String?
    /// A paid order's token whose mapping lives in another slot (N partitions): the caller makes it permanent.
    package var persist: String?
    /// With `reresolve`: a purchase chain of another partition must be claimed before the call can credit it.
    package var claim: Bool?
    /// Fraud signals the call recorded, one per transaction: `offer_unsigned` (a promotional offer redeemed without a
    /// signature of Tollgate's for its token). A signal never refuses anything: the transaction was credited.
    package var signals: [String]?
    /// `sandbox` when the call applied on the user's sandbox side (``LedgerSide``); ``coins`` is that side's balance.
    package var side: String?

    package init(
        outcome: Kind, reason: String? = nil, coins: Int64? = nil, unparked: Int? = nil,
        forwarded: Int? = nil, transactions: [TransactionResult]? = nil, emitted: String? = nil
    ) {
        self.outcome = outcome
        self.reason = reason
        self.coins = coins
        self.unparked = unparked
        self.forwarded = forwarded
        self.transactions = transactions
        self.emitted = emitted
    }
}
