extension AppStoreEnvironment {
    /// Reads the environment spellings of legacy payloads: `Production`/`Sandbox` in `verifyReceipt`
    /// responses, `PROD`/`Sandbox` in V1 notifications.
    package init(legacyValue: String) {
        switch legacyValue.lowercased() {
        case "prod", "production": self = .production
        case "sandbox": self = .sandbox
        default: self.init(rawValue: legacyValue)
        }
    }
}
