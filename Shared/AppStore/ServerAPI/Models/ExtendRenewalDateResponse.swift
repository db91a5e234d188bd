/// The answer of Extend a Subscription Renewal Date: Apple's `ExtendRenewalDateResponse`.
package struct ExtendRenewalDateResponse: Codable, Sendable, Hashable {
    package var originalTransactionId: String?
    package var webOrderLineItemId: String?
    package var success: Bool?
    /// The new renewal date (ms since 1970) when `success`.
    package var effectiveDate: Int64?

    package init(
        originalTransactionId: String? = nil, webOrderLineItemId: String? = nil, success: Bool? = nil,
        effectiveDate: Int64? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}
