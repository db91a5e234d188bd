import AppStore

extension SimLedger {
    /// Set App Account Token: every transaction of `original`'s chain carries `token` from now on, so Get Transaction
    /// Info, the history, receipts, renewal info and notifications all show it, and so does each later renewal (a
    /// new period copies the latest transaction). Apple sends no notification for it. A transaction that is not its
    /// chain's original is `4000187`, a Family Sharing one `4000185`.
    mutating func setAppAccountToken(_ token: String, on original: SimTransaction) throws(APIErrorBody) {
        guard original.transactionId == original.originalTransactionId else { throw .transactionIdNotOriginalTransactionId }
        guard original.inAppOwnershipType != .familyShared else { throw .familyTransactionNotSupported }
        for id in chains[original.originalTransactionId] ?? [original.transactionId] {
            guard var transaction = transactions[id] else { continue }
            transaction.appAccountToken = token
            store(transaction)
        }
    }
}
