@preconcurrency import Crypto
package import Foundation
import HTTPClient
import SwiftASN1
import X509

/// Verifies App Store signed data (JWS) the way Apple's rules require: compact form with three
/// segments, `alg` exactly ES256, an `x5c` of exactly three certificates chaining leaf → intermediate →
/// a configured trusted root with Apple's OIDs, a raw 64-byte r‖s P-256 signature, certificates valid
/// at the validation time (`signedDate` offline, now online), then bundle ID, environment and — for
/// production — app Apple ID.
///
/// Bad input never throws: every method returns a `VerificationResult`. Proven chains are cached
/// (`ChainCache`), so a repeat chain costs one P-256 verification. Safe to share between tasks.
package final class SignedDataVerifier: Sendable {
    package let configuration: SignedDataVerifierConfiguration
    /// Proven chains; its `statistics` show hits and misses.
    package let chainCache: ChainCache
    let chainValidator: CertificateChainValidator
    /// Proofs of chains under way: concurrent JWS carrying one new chain share one proof (and one budget's tokens).
    let proofsInFlight = ChainProofsInFlight()
    /// The trusted roots' DER: a chain whose `x5c[2]` is none of them is refused before any parsing.
    let trustedRootsDER: Set<[UInt8]>
    let revocationChecker: RevocationChecker?
    let now: @Sendable () -> Date

    /// Creates a verifier; throws when the configuration cannot work (unreadable root, production
    /// without an app Apple ID).
    package init(
        configuration: SignedDataVerifierConfiguration,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(SignedDataVerifierConfigurationError) {
        var roots: [Certificate] = []
        for (index, der) in configuration.rootCertificates.enumerated() {
            guard let root = try? Certificate(derEncoded: Array(der)) else {
                throw SignedDataVerifierConfigurationError(message: "root certificate \(index) is not DER")
            }
            roots.append(root)
        }
        guard !roots.isEmpty else {
            throw SignedDataVerifierConfigurationError(message: "at least one trusted root certificate is needed")
        }
        if configuration.environment == .production, !configuration.allowsMissingAppAppleId,
            configuration.appAppleId == nil || configuration.additionalApps.contains(where: { $0.appAppleId == nil })
        {
            throw SignedDataVerifierConfigurationError(message: "appAppleId is required in production")
        }
        self.configuration = configuration
        self.chainCache = ChainCache(capacity: configuration.chainCacheCapacity)
        self.chainValidator = CertificateChainValidator(roots: roots)
        self.trustedRootsDER = Set(configuration.rootCertificates.map { Array($0) })
        self.revocationChecker =
            configuration.onlineChecks && configuration.checksRevocation
            ? RevocationChecker(
                roots: roots, requester: configuration.ocspRequester ?? TransportOCSPRequester(transport: CurlTransport()))
            : nil
        self.now = now
    }

    /// Whether `jws` is signed by a leaf that chains to a trusted root with Apple's OIDs — nothing about its
    /// payload (no claims, no validity window). What ingest checks before storing a user's signed transaction.
    /// `budget` bounds the certificate checks spent on chains never seen before (``ChainCheckBudget``).
    package func checkSignature(_ jws: String, budget: ChainCheckBudget? = nil) async -> VerificationResult<Void> {
        switch await verifySignature(jws, budget: budget) {
        case .verified: return .verified(())
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
    }

    /// Verifies a signed transaction (`signedTransactionInfo`, StoreKit 2 `jwsRepresentation`).
    package func verifyTransaction(_ jws: String) async -> VerificationResult<JWSTransactionDecodedPayload> {
        await verifyTransactionDocument(jws).map(\.payload)
    }

    /// Verifies signed renewal info (`signedRenewalInfo`). It has no bundle ID; environment is checked.
    package func verifyRenewalInfo(_ jws: String) async -> VerificationResult<JWSRenewalInfoDecodedPayload> {
        await verifyRenewalInfoDocument(jws).map(\.payload)
    }

    /// Verifies a signed app transaction (`AppTransaction`).
    package func verifyAppTransaction(_ jws: String) async -> VerificationResult<AppTransaction> {
        await verifyAppTransactionDocument(jws).map(\.payload)
    }

    /// Verifies a transaction and keeps its decoded JSON.
    package func verifyTransactionDocument(_ jws: String) async -> VerificationResult<VerifiedDocument<JWSTransactionDecodedPayload>> {
        await verify(jws, as: JWSTransactionDecodedPayload.self) { checkTransactionClaims($0) }
    }

    /// Verifies renewal info and keeps its decoded JSON.
    package func verifyRenewalInfoDocument(_ jws: String) async -> VerificationResult<VerifiedDocument<JWSRenewalInfoDecodedPayload>> {
        await verify(jws, as: JWSRenewalInfoDecodedPayload.self) { checkEnvironment($0.environment) }
    }

    /// Verifies an app transaction and keeps its decoded JSON.
    package func verifyAppTransactionDocument(_ jws: String) async -> VerificationResult<VerifiedDocument<AppTransaction>> {
        await verify(jws, as: AppTransaction.self) {
            checkApp(bundleId: $0.bundleId, environment: $0.receiptType, appAppleId: $0.appAppleId)
        }
    }
}
