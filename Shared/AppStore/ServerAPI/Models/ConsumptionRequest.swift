/// The body of Send Consumption Information (v1): Apple's `ConsumptionRequest` (now `ConsumptionRequestV1`),
/// answering a `CONSUMPTION_REQUEST` notification within 12 hours. Values are Apple's integer codes.
package struct ConsumptionRequest: Codable, Sendable, Hashable {
    /// Must be `true`: the customer consented to sharing consumption data.
    package var customerConsented: Bool
    /// `0` undeclared, `1` not consumed, `2` partially consumed, `3` fully consumed.
    package var consumptionStatus: Int?
    /// `0` undeclared, `1` Apple, `2` non-Apple.
    package var platform: Int?
    package var sampleContentProvided: Bool?
    /// `0` delivered and working, `1`–`5` not delivered for a reason.
    package var deliveryStatus: Int?
    /// The purchase's app account token (UUID), or an empty string.
    package var appAccountToken: String
    package var accountTenure: Int?
    package var playTime: Int?
    package var lifetimeDollarsRefunded: Int?
    package var lifetimeDollarsPurchased: Int?
    package var userStatus: Int?
    /// `0` undeclared, `1` prefer grant, `2` prefer decline, `3` no preference.
    package var refundPreference: Int?

    package init(
        customerConsented: Bool = true, consumptionStatus: Int? = nil, platform: Int? = nil,
        sampleContentProvided: Bool? = nil, deliveryStatus: Int? = nil, appAccountToken: String = "",
        accountTenure: Int? = nil, playTime: Int? = nil, lifetimeDollarsRefunded: Int? = nil,
        lifetimeDollarsPurchased: Int? = nil, userStatus: Int? = nil, refundPreference: Int? = nil
    ) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.appAccountToken = appAccountToken
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }
}
