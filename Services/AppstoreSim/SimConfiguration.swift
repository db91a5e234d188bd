@preconcurrency import Crypto
import Foundation
import Logging

/// Settings of `appstore-sim`. Flags come from the command line (`--ca-dir`, `--legacy-ios6`); the rest
/// from the environment:
///
/// - `SIM_HOST` (`127.0.0.1`), `SIM_PORT` (`9700`): where the simulator listens.
/// - `SIM_NOTIFY_URL`: where V2 notifications are POSTed; unset, notifications are only recorded.
/// - `SIM_SHARED_SECRET`: the `verifyReceipt` password; unset, any password is accepted.
/// - `SIM_RETRY_SCALE` (`1`): Apple's notification retry delays (1 h, 12 h, 24 h, 48 h, 72 h) are divided by it.
/// - `SIM_NOTIFY_TIMEOUT_MS` (`5000`): how long one notification delivery may take.
/// - `SIM_API_PUBLIC_KEY`: PEM (inline or a file path) of the P-256 key whose tokens the App Store Server
///   API accepts; unset, any structurally valid ES256 token is accepted.
/// - `SIM_API_KEYS`: which key is valid for which app, as Apple holds it: a JSON list of
///   `{"bundleId", "keyId", "publicKey"}` (`publicKey` PEM inline or a file path, a public key or a `.p8`). A token
///   whose `bid` is listed must name one of that app's `kid`s and be signed by that key; a `bid` not listed falls back
///   to `SIM_API_PUBLIC_KEY`, and is refused when that is unset.
/// - `SIM_BUNDLE_ID` (`com.example.app`): the bundle ID of purchases that name none. Purchases may name any bundle ID.
/// - `SIM_APP_APPLE_ID` (`1234567890`): the app Apple ID put in notifications and receipts.
/// - `SIM_APP_APPLE_IDS`: a JSON object of bundle ID → app Apple ID, for apps other than `SIM_BUNDLE_ID`'s (the rest
///   get `SIM_APP_APPLE_ID`).
/// - `SIM_PAGE_SIZE` (`20`): page size of transaction history and notification history.
/// - `SIM_SHUTDOWN_GRACE` (`10s`): after SIGTERM, how long requests in progress may take before they are
///   cancelled (below compose's `stop_grace_period` of 15 s).
/// - `LOG_LEVEL` (`info`).
struct SimConfiguration: Sendable {
    var host = "127.0.0.1"
    var port = 9700
    var notifyURL: URL?
    var sharedSecret: String?
    var retryScale: Double = 1
    var notifyTimeout: Duration = .seconds(5)
    var apiPublicKey: P256.Signing.PublicKey?
    /// `SIM_API_KEYS`: keys valid for one app each.
    var apiKeys: [SimAPIKey] = []
    /// `SIM_APP_APPLE_IDS`.
    var appAppleIds: [String: Int64] = [:]
    var bundleId = "com.example.app"
    var appAppleId: Int64 = 1_234_567_890
    var pageSize = 20
    var logLevel: Logger.Level = .info
    var shutdownGrace: Duration = .seconds(10)
    /// `--legacy-ios6`: `verifyReceipt` answers in the iOS 6 shape.
    var legacyIOS6 = false
    /// `--ca-dir`: where the test CA is loaded from or saved to.
    var caDirectory: URL?

    init() {}

    /// The app Apple ID of `bundleId`'s app.
    func appAppleId(for bundleId: String) -> Int64 { appAppleIds[bundleId] ?? appAppleId }

    /// Apple's notification retry delays after a failed attempt, divided by ``retryScale``.
    var retryDelays: [Duration] {
        [1, 12, 24, 48, 72].map { hours in
            .milliseconds(Int64((Double(hours) * 3_600_000 / retryScale).rounded()))
        }
    }
}

/// One App Store Server API key and the app it is valid for (`SIM_API_KEYS`).
struct SimAPIKey: Sendable {
    var bundleId: String
    var keyId: String
    var publicKey: P256.Signing.PublicKey
}
