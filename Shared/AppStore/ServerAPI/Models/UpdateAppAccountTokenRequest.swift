/// The body of Set App Account Token: Apple's `UpdateAppAccountTokenRequest`.
package struct UpdateAppAccountTokenRequest: Codable, Sendable, Hashable {
    /// The UUID that maps the purchase to a customer account (Apple's `appAccountToken`); Apple refuses anything
    /// that is not a UUID (`4000183`).
    package var appAccountToken: String

    package init(appAccountToken: String) {
        self.appAccountToken = appAccountToken
    }
}
