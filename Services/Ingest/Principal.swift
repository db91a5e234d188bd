import Pipeline

/// Who is calling, once authenticated.
enum Principal: Sendable, Hashable {
    /// An app user, from the `sub` of a valid HS256 token.
    case user(String)
    /// A backend service holding an API key.
    case service

    /// Whether this caller may read `userID`'s data (jobs, entitlements).
    func mayRead(user userID: String?) -> Bool {
        switch self {
        case .service: return true
        case .user(let id): return userID.map { UserID.same($0, id) } ?? false
        }
    }
}
