import Core
package import Foundation
package import X509

/// What a `SignedDataVerifier` trusts and whose data it accepts.
///
/// `bundleId`, `environment` and `appAppleId` set to `nil` switch that check off — meant for operator
/// tools such as `tollctl verify`, never for the verifier service, which sets all three.
package struct SignedDataVerifierConfiguration: Sendable {
    /// Trusted root certificates (DER). Default: Apple Root CA - G3.
    package var rootCertificates: [Data]
    /// The (default) app's bundle ID; `nil` skips the check.
    package var bundleId: String?
    /// The deployment's other apps (`TOLLGATE_APPS`): data signed for any of them is accepted too, each checked against
    /// its own app Apple ID. Ignored when ``bundleId`` is nil.
    package var additionalApps: [AppIdentity.App]
    /// The environment data must come from; `nil` skips the check.
    package var environment: AppStoreEnvironment?
    /// The app's Apple ID, checked on production notifications and app transactions. Required when
    /// `environment` is production unless `allowsMissingAppAppleId` is set.
    package var appAppleId: Int64?
    /// Tools only: accept production data without an app Apple ID to check against.
    package var allowsMissingAppAppleId: Bool
    /// In production, also accept sandbox data (App Review buys in sandbox).
    package var acceptsSandbox: Bool
    /// Online mode: validate at the current time instead of the payload's `signedDate`, and ask OCSP
    /// when `checksRevocation` is set.
    package var onlineChecks: Bool
    /// Online mode only: ask the certificates' OCSP responders (verified "revoked" →
    /// `certificate_revoked`; no answer → retryable `retryable_ocsp`).
    package var checksRevocation: Bool
    /// The OCSP transport; `nil` uses a `TransportOCSPRequester` on its own `CurlTransport`.
    package var ocspRequester: (any OCSPRequester)?
    /// Online mode only: how long a proven (and revocation-checked) chain is reused before being checked
    /// again.
    package var onlineChainLifetime: TimeInterval
    /// How many proven chains to keep (0 disables the cache).
    package var chainCacheCapacity: Int

    package init(
        rootCertificates: [Data] = [AppleRootCertificates.appleRootCAG3],
        bundleId: String?,
        environment: AppStoreEnvironment?,
        appAppleId: Int64? = nil,
        allowsMissingAppAppleId: Bool = false,
        acceptsSandbox: Bool = false,
        onlineChecks: Bool = false,
        checksRevocation: Bool = false,
        ocspRequester: (any OCSPRequester)? = nil,
        onlineChainLifetime: TimeInterval = 900,
        chainCacheCapacity: Int = 64,
        additionalApps: [AppIdentity.App] = []
    ) {
        self.rootCertificates = rootCertificates
        self.bundleId = bundleId
        self.environment = environment
        self.appAppleId = appAppleId
        self.allowsMissingAppAppleId = allowsMissingAppAppleId
        self.acceptsSandbox = acceptsSandbox
        self.onlineChecks = onlineChecks
        self.checksRevocation = checksRevocation
        self.ocspRequester = ocspRequester
        self.onlineChainLifetime = onlineChainLifetime
        self.chainCacheCapacity = chainCacheCapacity
        self.additionalApps = additionalApps
    }

    /// The bundle IDs data is accepted for, and each app's Apple ID; nil when the check is off.
    package var acceptedApps: [AppIdentity.App]? {
        guard let bundleId else { return nil }
        return [AppIdentity.App(bundleId: bundleId, appAppleId: appAppleId)] + additionalApps
    }
}

/// A configuration the verifier refuses at startup.
package struct SignedDataVerifierConfigurationError: TollgateError, Sendable {
    package var message: String
    package var code: String { "invalid_trust_configuration" }
}
