/// Who a purchase event belongs to, found in the order of docs/ARCHITECTURE.md §5 (``LedgerApplier/resolveOwner(_:)``):
/// the authenticated submitter, an earlier binding of an `originalTransactionId`, the `appAccountToken`'s order — or
/// nobody yet.
package enum OwnerResolution: Sendable, Hashable {
    /// The authenticated user who submitted it (client jobs).
    case user(String)
    /// The user of the order the token maps to (`tg:{aat:<token>}:order`).
    case token(user: String, orderNo: String?, token: String)
    /// The user an `originalTransactionId` of the event is already bound to.
    case binding(user: String, originalTransactionId: String)
    /// No owner known: the event is parked until one is.
    case unknown

    /// The owner, when known.
    package var user: String? {
        switch self {
        case .user(let user), .token(let user, _, _), .binding(let user, _): user
        case .unknown: nil
        }
    }
}
