import Core
import Pipeline

/// An app user, once authenticated: the token's `sub`, in the project whose secret signed the token
/// (docs/PROJECTS.md). Two projects' users of one id are two users.
struct AppUser: Sendable, Hashable {
    var id: String
    var project: ProjectID
}

/// Who is calling, once authenticated.
enum Principal: Sendable, Hashable {
    /// An app user, from the `sub` of a valid HS256 token and the project whose secret signed it.
    case user(String, project: ProjectID = .default)
    /// A backend service holding an API key (``ServiceKey``); service keys serve the default project.
    case service(ServiceCaller)

    /// The project whose ledger the caller reads.
    var project: ProjectID {
        switch self {
        case .user(_, let project): project
        case .service(let caller): caller.project
        }
    }

    /// Whether this caller may read `userID`'s data (jobs, entitlements) in the caller's project: the user
    /// themselves, or a service with the `read` scope.
    func mayRead(user userID: String?) -> Bool {
        switch self {
        case .service(let caller): return caller.may(.read)
        case .user(let id, _): return userID.map { UserID.same($0, id) } ?? false
        }
    }
}
