/// Errors of the ledger module, each with a stable machine code.
public enum LedgerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The catalog file cannot be read or is invalid; the message says where and why.
    case invalidCatalog(String)

    public var code: String {
        switch self {
        case .invalidCatalog: "invalid_catalog"
        }
    }

    public var description: String {
        switch self {
        case .invalidCatalog(let message): "TOLLGATE_CATALOG: \(message)"
        }
    }
}
