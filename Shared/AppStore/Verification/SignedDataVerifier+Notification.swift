extension SignedDataVerifier {
    /// Verifies an App Store Server Notification V2 `signedPayload`, then its nested
    /// `signedTransactionInfo` and `signedRenewalInfo`: a forged nested JWS inside a genuine notification
    /// rejects the whole notification, and nested data must name the notification's bundle and
    /// environment.
    package func verifyNotification(_ jws: String) async -> VerificationResult<VerifiedNotification> {
        switch await verifySignature(jws) {
        case .verified(let envelope): return await verifyNotification(envelope)
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
    }

    /// The notification checks after the outer signature verified.
    func verifyNotification(_ envelope: Envelope) async -> VerificationResult<VerifiedNotification> {
        let outer: VerifiedDocument<ResponseBodyV2DecodedPayload>
        switch finish(
            envelope, as: ResponseBodyV2DecodedPayload.self,
            claims: { notification in
                checkApp(
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
        return .verified(
            VerifiedNotification(
                payload: outer.payload, json: outer.json, transaction: transaction, renewalInfo: renewal
            ))
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

    private static func nested(_ field: String, _ failure: VerificationFailure) -> VerificationFailure {
        .init(failure.code, "\(field): \(failure.message)")
    }
}
