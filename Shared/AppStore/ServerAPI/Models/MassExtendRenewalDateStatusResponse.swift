/// Get Status of Subscription Renewal Date Extensions: Apple's `MassExtendRenewalDateStatusResponse`.
package struct MassExtendRenewalDateStatusResponse: Codable, Sendable, Hashable {
    package var requestIdentifier: String?
    package var complete: Bool?
    /// When the extension finished (ms since 1970).
    package var completeDate: Int64?
    package var succeededCount: Int64?
    package var failedCount: Int64?

    package init(
        requestIdentifier: String? = nil, complete: Bool? = nil, completeDate: Int64? = nil,
        succeededCount: Int64? = nil, failedCount: Int64? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}
