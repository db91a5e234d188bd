import Foundation

/// `POST /sim/notifications/rescind-consent`: a parent or guardian rescinds consent for a customer's use of
/// the app, and Apple sends `RESCIND_CONSENT` with `appData` (the app and its signed app transaction).
struct RescindConsentRequest: Decodable, Sendable {
    /// The app (default `SIM_BUNDLE_ID`).
    var bundleId: String?
    /// `Production` (default) or `Sandbox`.
    var environment: String?
    /// The customer's app download (`appTransactionId` of the signed app transaction; default a fresh one).
    var appTransactionId: String?
}
