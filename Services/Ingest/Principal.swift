import Pipeline

/// Who is calling, once authenticated.
enum Principal: Sendable, Hashable {
    /// An app user, from the `sub` of a valid HS256 token.
    case user(String)
    /// A backend service holding an API key (``ServiceKey``).
    case service(ServiceCaller)

    /// Whether this caller may read `userID`'s data (jobs, entitlements): the user themselves, or a service with
    /// the `read` scope.
    func mayRead(user userID: String?) -> Bool {
        switch self {
        case .service(let caller): return caller.may(.read)
        case .user(let id): return userID.map { UserID.same($0, id) } ?? false
        }
    }
}
