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

    /// The bundle ID Apple signed must be one of the deployment's apps (compared exactly, as Apple writes it).
    func checkBundleId(_ bundleId: String?) -> VerificationFailure? {
        guard let apps = configuration.acceptedApps, let expected = configuration.bundleId else { return nil }
        if let bundleId, apps.contains(where: { $0.bundleId == bundleId }) { return nil }
        let wanted = apps.count == 1 ? expected : "one of \(apps.map(\.bundleId).joined(separator: ", "))"
        return .init(.wrongBundleID, "data is for bundle \(bundleId ?? "(none)"), expected \(wanted)")
    }

    /// Bundle ID, environment and, for production data, the app Apple ID of that bundle's app.
    func checkApp(bundleId: String?, environment: AppStoreEnvironment?, appAppleId: Int64?) -> VerificationFailure? {
        if let failure = checkBundleId(bundleId) { return failure }
        if let failure = checkEnvironment(environment) { return failure }
        guard environment == .production else { return nil }
        let expected: Int64? =
            if let apps = configuration.acceptedApps {
                apps.first { $0.bundleId == bundleId }?.appAppleId
            } else {
                configuration.appAppleId
            }
        if let expected, appAppleId != expected {
            return .init(.wrongAppAppleID, "data is for app \(appAppleId.map(String.init) ?? "(none)"), expected \(expected)")
        }
        return nil
    }

    func checkTransactionClaims(_ transaction: JWSTransactionDecodedPayload) -> VerificationFailure? {
        checkBundleId(transaction.bundleId) ?? checkEnvironment(transaction.environment)
    }
}
