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

/// The body of Extend Subscription Renewal Dates for All Active Subscribers: Apple's
/// `MassExtendRenewalDateRequest`.
package struct MassExtendRenewalDateRequest: Codable, Sendable, Hashable {
    package var extendByDays: Int
    package var extendReasonCode: Int
    package var requestIdentifier: String
    package var productId: String
    /// Only subscribers in these storefronts (ISO 3166-1 alpha-3); all when absent.
    package var storefrontCountryCodes: [String]?

    package init(
        extendByDays: Int, extendReasonCode: Int, requestIdentifier: String, productId: String,
        storefrontCountryCodes: [String]? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
    }
}

/// The answer of a mass extension request: Apple's `MassExtendRenewalDateResponse`.
package struct MassExtendRenewalDateResponse: Codable, Sendable, Hashable {
    package var requestIdentifier: String

    package init(requestIdentifier: String) {
        self.requestIdentifier = requestIdentifier
    }
}

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

/// The answer of Get App Transaction Info: Apple's `AppTransactionInfoResponse`.
package struct AppTransactionInfoResponse: Codable, Sendable, Hashable {
    /// The customer's app transaction, a JWS signed by the App Store.
    package var signedAppTransactionInfo: String

    package init(signedAppTransactionInfo: String) {
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
