/// The rule a shared secret Tollgate holds must meet: at least ``minimumBytes`` bytes and not a shipped placeholder
/// (``placeholderMarker``). Service keys (`TOLLGATE_SERVICE_KEYS`), the placeholder check of every `TOLLGATE_*`
/// setting and webhook secrets all use this one rule.
package enum SecretRule {
    /// The shortest secret accepted, in UTF-8 bytes (HMAC-SHA256's block is 64, its output 32).
    package static let minimumBytes = 32
    /// What the shipped example settings (`compose/*.env`) hold in place of every secret.
    package static let placeholderMarker = "replace-me"

    /// Why a secret is refused. Its text never holds the secret.
    package enum Problem: Error, Sendable, Hashable {
        case tooShort(bytes: Int)
        case placeholder

        package var message: String {
            switch self {
            case .tooShort(let bytes): "must be at least \(SecretRule.minimumBytes) bytes (has \(bytes))"
            case .placeholder: "still holds a shipped placeholder ('\(SecretRule.placeholderMarker)')"
            }
        }
    }

    /// Whether `secret` holds the placeholder marker (any case).
    package static func isPlaceholder(_ secret: String) -> Bool {
        secret.lowercased().contains(placeholderMarker)
    }

    /// What is wrong with `secret`, or nil when it meets the rule.
    package static func problem(_ secret: String) -> Problem? {
        if isPlaceholder(secret) { return .placeholder }
        if secret.utf8.count < minimumBytes { return .tooShort(bytes: secret.utf8.count) }
        return nil
    }
}
