/// The body of Extend a Subscription Renewal Date: Apple's `ExtendRenewalDateRequest`.
package struct ExtendRenewalDateRequest: Codable, Sendable, Hashable {
    /// Days to add to the renewal date, 1 to 90 (Apple allows two extensions a year per subscription).
    package var extendByDays: Int
    /// `0` undeclared, `1` customer satisfaction, `2` other, `3` service issue or outage.
    package var extendReasonCode: Int
    /// A UUID the caller chooses: the request's identity (Apple answers a repeat with the first outcome).
    package var requestIdentifier: String

    package init(extendByDays: Int, extendReasonCode: Int, requestIdentifier: String) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}
