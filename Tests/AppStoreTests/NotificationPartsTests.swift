import AppStore
import AppStoreTesting
import Core
import Foundation
import TestSupport
import Testing

/// Every V2 part Apple sends (`data`, `summary`, `externalPurchaseToken`, `appData`) is checked against the
/// configured app like `data` is, `appData`'s nested app transaction like every nested JWS, and a notification
/// must carry exactly one part.
@Suite struct NotificationPartsTests {
    let authority: TestCertificateAuthority
    let verifier: SignedDataVerifier
    let production: SignedDataVerifier

    init() throws {
        authority = try TestCertificateAuthority()
        verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        production = try JWSTestSupport.verifier(roots: [authority.rootDER], environment: .production)
    }

    static let appTransactionId = "704289572311039393"

    /// The customer's app transaction, as Apple signs it.
    static func app(
        bundleId: String = JWSTestSupport.bundleId, environment: AppStoreEnvironment = .sandbox,
        appAppleId: Int64? = JWSTestSupport.appAppleId
    ) -> AppTransaction {
        AppTransaction(
            receiptType: environment, appAppleId: appAppleId, bundleId: bundleId, applicationVersion: "1",
            originalPurchaseDate: JWSTestSupport.nowMilliseconds() - 86_400_000, appTransactionId: appTransactionId,
            signedDate: JWSTestSupport.nowMilliseconds())
    }

    /// `RESCIND_CONSENT` with `appData`.
    static func rescind(
        signedApp: String?, bundleId: String = JWSTestSupport.bundleId, environment: AppStoreEnvironment = .sandbox,
        appAppleId: Int64? = JWSTestSupport.appAppleId
    ) -> ResponseBodyV2DecodedPayload {
        ResponseBodyV2DecodedPayload(
            notificationType: .rescindConsent, notificationUUID: UUID().uuidString.lowercased(),
            appData: AppData(appAppleId: appAppleId, bundleId: bundleId, environment: environment, signedAppTransactionInfo: signedApp),
            signedDate: JWSTestSupport.nowMilliseconds())
    }

    func sign(_ payload: some Encodable) throws -> String { try authority.signer().sign(payload) }

    func failure(_ notification: ResponseBodyV2DecodedPayload, with verifier: SignedDataVerifier? = nil) async throws
        -> VerificationFailure?
    {
        await (verifier ?? self.verifier).verifyNotification(try sign(notification)).failure
    }

    @Test func genuineRescindConsentIsVerifiedWithItsAppTransaction() async throws {
        let jws = try sign(Self.rescind(signedApp: try sign(Self.app())))
        let verified = try #require(await verifier.verifyNotification(jws).value)
        #expect(verified.payload.notificationType == .rescindConsent)
        #expect(verified.appTransaction?.payload.appTransactionId == Self.appTransactionId)
        #expect(verified.transaction == nil)

        // tollctl's view: the nested app transaction is shown decoded in place.
        let any = try #require(await verifier.verifyAny(jws).value)
        let root = try #require(JSONValue.read(try any.decodedJSON()))
        #expect(root["appData"]?["signedAppTransactionInfo"]?["appTransactionId"]?.string == Self.appTransactionId)

        let inProduction = try sign(Self.rescind(signedApp: try sign(Self.app(environment: .production)), environment: .production))
        #expect(await production.verifyNotification(inProduction).value?.appTransaction != nil)
    }

    @Test func appDataForAnotherAppOrEnvironmentIsRejected() async throws {
        let other = try sign(Self.app(bundleId: "com.evil.app"))
        #expect(try await failure(Self.rescind(signedApp: other, bundleId: "com.evil.app"))?.code == .wrongBundleID)
        let productionApp = try sign(Self.app(environment: .production))
        #expect(try await failure(Self.rescind(signedApp: productionApp, environment: .production))?.code == .wrongEnvironment)
        #expect(
            try await failure(
                Self.rescind(
                    signedApp: try sign(Self.app(environment: .production, appAppleId: 999)), environment: .production, appAppleId: 999),
                with: production)?.code == .wrongAppAppleID)
        let sandboxApp = try sign(Self.app())
        #expect(try await failure(Self.rescind(signedApp: sandboxApp), with: production)?.code == .sandboxNotAllowed)
    }

    @Test func forgedOrMismatchedNestedAppTransactionIsRejected() async throws {
        let attacker = try TestCertificateAuthority()
        let forged = try attacker.signer().sign(Self.app())
        let failure = try #require(try await failure(Self.rescind(signedApp: forged)))
        #expect(failure.code == .invalidChain)
        #expect(failure.message.hasPrefix("appData.signedAppTransactionInfo"))

        // Genuine, but for another app or environment than the notification carrying it — even for a tool that
        // checks no configured app.
        let tool = try JWSTestSupport.verifier(roots: [authority.rootDER], bundleId: nil, environment: nil, appAppleId: nil)
        let otherApp = try sign(Self.app(bundleId: "com.other.app"))
        #expect(try await self.failure(Self.rescind(signedApp: otherApp), with: tool)?.code == .wrongBundleID)
        let otherEnvironment = try sign(Self.app(environment: .production))
        #expect(try await self.failure(Self.rescind(signedApp: otherEnvironment), with: tool)?.code == .wrongEnvironment)
        let otherAppleId = try sign(Self.app(environment: .production, appAppleId: 5))
        #expect(
            try await self.failure(Self.rescind(signedApp: otherAppleId, environment: .production), with: tool)?.code
                == .wrongAppAppleID)

        // Not a JWS at all.
        #expect(try await self.failure(Self.rescind(signedApp: "not.a.jws"))?.code == .invalidFormat)
        // None: the notification is about the app alone, as Apple's own library accepts it (issue 29 item 8).
        #expect(try await self.failure(Self.rescind(signedApp: nil)) == nil)
        #expect(try await self.failure(Self.rescind(signedApp: "")) == nil)
    }

    @Test func aNotificationMustCarryExactlyOnePart() async throws {
        var both = Self.rescind(signedApp: try sign(Self.app()))
        both.data = NotificationData(bundleId: JWSTestSupport.bundleId, environment: .sandbox)
        #expect(try await failure(both)?.code == .ambiguousNotificationData)

        var neither = Self.rescind(signedApp: nil)
        neither.appData = nil
        #expect(try await failure(neither)?.code == .missingNotificationData)

        // A second part for another app cannot hide behind a first part that is right.
        var hidden = JWSTestSupport.notification(signedTransactionInfo: nil)
        hidden.summary = NotificationSummary(environment: .sandbox, appAppleId: 1, bundleId: "com.evil.app")
        #expect(try await failure(hidden)?.code == .ambiguousNotificationData)
        hidden.summary = nil
        #expect(try await failure(hidden) == nil)
    }

    @Test func summaryIsCheckedLikeData() async throws {
        func summary(
            bundleId: String = JWSTestSupport.bundleId, environment: AppStoreEnvironment = .sandbox,
            appAppleId: Int64? = JWSTestSupport.appAppleId
        )
            -> ResponseBodyV2DecodedPayload
        {
            ResponseBodyV2DecodedPayload(
                notificationType: .renewalExtension, subtype: .summary, notificationUUID: UUID().uuidString,
                summary: NotificationSummary(environment: environment, appAppleId: appAppleId, bundleId: bundleId),
                signedDate: JWSTestSupport.nowMilliseconds())
        }
        #expect(try await failure(summary()) == nil)
        #expect(try await failure(summary(bundleId: "com.evil.app"))?.code == .wrongBundleID)
        #expect(try await failure(summary(environment: .production))?.code == .wrongEnvironment)
        #expect(try await failure(summary(environment: .production), with: production) == nil)
        #expect(try await failure(summary(environment: .production, appAppleId: 7), with: production)?.code == .wrongAppAppleID)
        #expect(try await failure(summary(environment: .production, appAppleId: nil), with: production)?.code == .wrongAppAppleID)
    }

    @Test func externalPurchaseTokenIsCheckedLikeData() async throws {
        func token(id: String = "SANDBOX_0a1b", bundleId: String = JWSTestSupport.bundleId, appAppleId: Int64? = JWSTestSupport.appAppleId)
            -> ResponseBodyV2DecodedPayload
        {
            ResponseBodyV2DecodedPayload(
                notificationType: .externalPurchaseToken, subtype: .unreported, notificationUUID: UUID().uuidString,
                externalPurchaseToken: ExternalPurchaseToken(
                    externalPurchaseId: id, tokenCreationDate: JWSTestSupport.nowMilliseconds(), appAppleId: appAppleId,
                    bundleId: bundleId),
                signedDate: JWSTestSupport.nowMilliseconds())
        }
        #expect(try await failure(token()) == nil)
        #expect(try await failure(token(bundleId: "com.evil.app"))?.code == .wrongBundleID)
        #expect(try await failure(token(id: "0a1b"))?.code == .wrongEnvironment)
        #expect(try await failure(token(id: "0a1b"), with: production) == nil)
        #expect(try await failure(token(id: "0a1b", appAppleId: 7), with: production)?.code == .wrongAppAppleID)
        #expect(try await failure(token(), with: production)?.code == .sandboxNotAllowed)
    }
}
