/// How receipts are validated (`TOLLGATE_RECEIPT_VALIDATION`).
package enum ReceiptValidationMode: String, Sendable, CaseIterable {
    /// Apple's deprecated `verifyReceipt` endpoint.
    case verifyReceipt = "verify-receipt"
    /// Without `verifyReceipt`: the receipt's signature is proven offline, its transaction IDs read from it,
    /// and what they are now taken from the App Store Server API's signed transactions. Needs an API key.
    case serverAPI = "server-api"
    /// The Server API when a key serves the receipt's environment and the receipt is an app receipt Tollgate
    /// can prove offline; `verifyReceipt` otherwise (iOS 6 transaction receipts, no key, anything Tollgate
    /// cannot prove: then Apple decides).
    case auto
}
