/// A `.p8` key of App Store Connect (Users and Access, Integrations, In-App Purchase): an App Store Server API key or
/// a subscription-offer key. Such keys are team-wide, so several apps of a deployment may name the same one; each app
/// still signs its own tokens with it (its own `bid`). Its description shows only the key ID, so that the key never
/// reaches a log.
package struct AppStoreKey: Sendable, Hashable, CustomStringConvertible {
    package var keyId: String
    package var issuerId: String
    /// The `.p8` file's contents (PEM, `-----BEGIN PRIVATE KEY-----`).
    package var privateKeyPEM: String

    package init(keyId: String, issuerId: String, privateKeyPEM: String) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.privateKeyPEM = privateKeyPEM
    }

    package var description: String { "AppStoreKey(keyId: \(keyId))" }
}
