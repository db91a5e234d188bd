extension SignedDataVerifier {
    /// Verifies an App Store Server Notification V2 `signedPayload`, then its nested
    /// `signedTransactionInfo`, `signedRenewalInfo` and `appData.signedAppTransactionInfo`: a forged nested JWS
    /// inside a genuine notification rejects the whole notification, and nested data must name the
    /// notification's bundle and environment. The notification must carry exactly one of `data`, `summary`,
    /// `externalPurchaseToken` and `appData`, and that part's app and environment are checked.
    package func verifyNotification(_ jws: String) async -> VerificationResult<VerifiedNotification> {
        switch await verifySignature(jws) {
        case .verified(let envelope): return await verifyNotification(envelope)
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
    }

    /// What ingest checks before it stores an anonymous V2 notification: the signature (``checkSignature(_:budget:)``),
    /// then that the payload is a notification of this app: a `notificationUUID`, exactly one of its parts, and that
    /// part's bundle ID, environment (and, in production, app Apple ID) as configured. Any app's StoreKit transaction
    /// is signed by Apple too; without these checks it would pass the door. The nested JWS are left to the verifier.
    package func checkNotification(_ jws: String, budget: ChainCheckBudget? = nil) async -> NotificationDoorCheck {
        let envelope: Envelope
        switch await verifySignature(jws, budget: budget) {
        case .verified(let verified): envelope = verified
        case .rejected(let failure): return .badSignature(failure)
        case .retryable(let failure): return .deferred(failure)
        }
        let checked = finish(
            envelope, as: ResponseBodyV2DecodedPayload.self,
            claims: { notification in
                guard let uuid = notification.notificationUUID, !uuid.isEmpty else {
                    return .init(.invalidFormat, "the signed payload has no notificationUUID")
                }
                return checkParts(notification)
                    ?? checkApp(
                        bundleId: notification.declaredBundleId, environment: notification.declaredEnvironment,
                        appAppleId: notification.declaredAppAppleId)
            })
        switch checked {
        case .verified(let document): return .accepted(notificationUUID: document.payload.notificationUUID?.lowercased() ?? "")
        case .rejected(let failure) where failure.code == .certificateExpired: return .badSignature(failure)
        case .rejected(let failure): return .notForThisApp(failure)
        case .retryable(let failure): return .deferred(failure)
        }
    }

    /// The notification checks after the outer signature verified.
    func verifyNotification(_ envelope: Envelope) async -> VerificationResult<VerifiedNotification> {
        let outer: VerifiedDocument<ResponseBodyV2DecodedPayload>
        switch finish(
            envelope, as: ResponseBodyV2DecodedPayload.self,
            claims: { notification in
                checkParts(notification)
                    ?? checkApp(
                        bundleId: notification.declaredBundleId,
                        environment: notification.declaredEnvironment,
                        appAppleId: notification.declaredAppAppleId
                    )
            })
        {
        case .verified(let document): outer = document
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
        let data = outer.payload.data

        var transaction: VerifiedDocument<JWSTransactionDecodedPayload>?
        if let nested = data?.signedTransactionInfo {
            switch await verifyTransactionDocument(nested) {
            case .verified(let document): transaction = document
            case .rejected(let failure): return .rejected(Self.nested("signedTransactionInfo", failure))
            case .retryable(let failure): return .retryable(Self.nested("signedTransactionInfo", failure))
            }
            if let failure = checkNestedMatches(
                bundleId: transaction?.payload.bundleId, checksBundle: true,
                environment: transaction?.payload.environment, outer: outer.payload
            ) {
                return .rejected(Self.nested("signedTransactionInfo", failure))
            }
        }

        var renewal: VerifiedDocument<JWSRenewalInfoDecodedPayload>?
        if let nested = data?.signedRenewalInfo {
            switch await verifyRenewalInfoDocument(nested) {
            case .verified(let document): renewal = document
            case .rejected(let failure): return .rejected(Self.nested("signedRenewalInfo", failure))
            case .retryable(let failure): return .retryable(Self.nested("signedRenewalInfo", failure))
            }
            if let failure = checkNestedMatches(
                bundleId: nil, checksBundle: false, environment: renewal?.payload.environment, outer: outer.payload
            ) {
                return .rejected(Self.nested("signedRenewalInfo", failure))
            }
        }

        // `appData` may come without an app transaction (Apple's own library accepts that): the notification is then
        // about the app alone. When there is one, it is verified like any JWS and must match the notification.
        var appTransaction: VerifiedDocument<AppTransaction>?
        if let appData = outer.payload.appData, let nested = appData.signedAppTransactionInfo, !nested.isEmpty {
            let field = "appData.signedAppTransactionInfo"
            switch await verifyAppTransactionDocument(nested) {
            case .verified(let document): appTransaction = document
            case .rejected(let failure): return .rejected(Self.nested(field, failure))
            case .retryable(let failure): return .retryable(Self.nested(field, failure))
            }
            let app = appTransaction?.payload
            if let failure = checkNestedMatches(
                bundleId: app?.bundleId, checksBundle: true, environment: app?.receiptType, outer: outer.payload
            ) ?? checkNestedAppAppleId(app?.appAppleId, outer: outer.payload) {
                return .rejected(Self.nested(field, failure))
            }
        }
        return .verified(
            VerifiedNotification(
                payload: outer.payload, json: outer.json, transaction: transaction, renewalInfo: renewal,
                appTransaction: appTransaction
            ))
    }

    /// Exactly one of `data`, `summary`, `externalPurchaseToken` and `appData`: with none there is no app to
    /// check, and with two the second would escape the checks made on the first.
    private func checkParts(_ notification: ResponseBodyV2DecodedPayload) -> VerificationFailure? {
        let parts = notification.parts
        if parts.isEmpty {
            return .init(.missingNotificationData, "the notification has none of data, summary, externalPurchaseToken, appData")
        }
        if parts.count > 1 {
            return .init(
                .ambiguousNotificationData, "the notification carries more than one of its parts: \(parts.joined(separator: ", "))")
        }
        return nil
    }

    /// Nested data must belong to the same app and environment as the notification carrying it, even
    /// when the configuration leaves those checks off (operator tools).
    private func checkNestedMatches(
        bundleId: String?, checksBundle: Bool, environment: AppStoreEnvironment?, outer: ResponseBodyV2DecodedPayload
    ) -> VerificationFailure? {
        if checksBundle, bundleId != outer.declaredBundleId {
            return .init(.wrongBundleID, "nested bundle \(bundleId ?? "(none)") differs from the notification's")
        }
        if environment != outer.declaredEnvironment {
            return .init(.wrongEnvironment, "nested environment \(environment?.rawValue ?? "(none)") differs from the notification's")
        }
        return nil
    }

    /// A production app transaction must name the notification's app Apple ID (sandbox ones may carry none).
    private func checkNestedAppAppleId(_ appAppleId: Int64?, outer: ResponseBodyV2DecodedPayload) -> VerificationFailure? {
        guard outer.declaredEnvironment == .production, appAppleId != outer.declaredAppAppleId else { return nil }
        return .init(.wrongAppAppleID, "nested app \(appAppleId.map(String.init) ?? "(none)") differs from the notification's")
    }

    private static func nested(_ field: String, _ failure: VerificationFailure) -> VerificationFailure {
        .init(failure.code, "\(field): \(failure.message)")
    }
}
