/// The body of Send Consumption Information (v2): Apple's `ConsumptionRequest`, answering a
/// `CONSUMPTION_REQUEST` notification within 12 hours.
package struct ConsumptionRequestV2: Codable, Sendable, Hashable {
    /// Whether the app delivered the purchase and it works (Apple's `deliveryStatus`).
    package enum DeliveryStatus: String, Codable, Sendable, Hashable {
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// The app's preferred outcome of the refund request (Apple's `refundPreference`).
    package enum RefundPreference: String, Codable, Sendable, Hashable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }

    /// Must be `true`: the customer consented to sharing consumption data (Apple refuses anything else).
    package var customerConsented: Bool
    /// The share the customer consumed, in milli-percent (`0`–`100000`); `0` unless ``deliveryStatus`` is
    /// `DELIVERED`.
    package var consumptionPercentage: Int?
    package var deliveryStatus: DeliveryStatus
    package var refundPreference: RefundPreference?
    /// Whether a free sample, trial or description of the content was provided before the purchase.
    package var sampleContentProvided: Bool

    package init(
        customerConsented: Bool, consumptionPercentage: Int? = nil, deliveryStatus: DeliveryStatus,
        refundPreference: RefundPreference? = nil, sampleContentProvided: Bool = false
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }
}
