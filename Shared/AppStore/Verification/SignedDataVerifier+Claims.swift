extension SignedDataVerifier {
    /// Environment: must be the configured one (or sandbox when production accepts sandbox).
    func checkEnvironment(_ environment: AppStoreEnvironment?) -> VerificationFailure? {
        guard let expected = configuration.environment else { return nil }
        if environment == expected { return nil }
        if expected == .production, environment == .sandbox {
            if configuration.acceptsSandbox { return nil }
            return .init(.sandboxNotAllowed, "sandbox data is not accepted by this production deployment")
        }
        return .init(.wrongEnvironment, "data is from \(environment?.rawValue ?? "no environment"), expected \(expected.rawValue)")
    }

    func checkBundleId(_ bundleId: String?) -> VerificationFailure? {
        guard let expected = configuration.bundleId, bundleId != expected else { return nil }
        return .init(.wrongBundleID, "data is for bundle \(bundleId ?? "(none)"), expected \(expected)")
    }

    /// Bundle ID, environment and, for production data, the app Apple ID.
    func checkApp(bundleId: String?, environment: AppStoreEnvironment?, appAppleId: Int64?) -> VerificationFailure? {
        if let failure = checkBundleId(bundleId) { return failure }
        if let failure = checkEnvironment(environment) { return failure }
        if environment == .production, let expected = configuration.appAppleId, appAppleId != expected {
            return .init(.wrongAppAppleID, "data is for app \(appAppleId.map(String.init) ?? "(none)"), expected \(expected)")
        }
        return nil
    }

    func checkTransactionClaims(_ transaction: JWSTransactionDecodedPayload) -> VerificationFailure? {
        checkBundleId(transaction.bundleId) ?? checkEnvironment(transaction.environment)
    }
}
