/// Which of a user's two ledgers a change belongs to (docs/ARCHITECTURE.md, invariant 11).
///
/// Every user has a **primary** side, the deployment's own environment (production in a production deployment,
/// sandbox in a sandbox one), under today's key names. A production deployment that accepts sandbox data
/// (`TOLLGATE_ACCEPT_SANDBOX=true`: App Review, TestFlight) keeps it on the user's **sandbox** side: the same keys with
/// `sbx:` after the user's hash tag (`tg:{u:alice}:sbx:account`), so both sides share one Redis Cluster slot and one
/// call can touch both (a spend), yet no sandbox purchase ever reaches a production balance, record or event sequence.
///
/// The verifier decides the side (it knows the deployment's environment, ``PurchaseEvent/side``); the fulfiller
/// applies on it; readers name it.
package enum LedgerSide: String, Sendable, Hashable, CaseIterable {
    case primary
    case sandbox

    /// The side data of Apple's environment `environment` (`Production`, `Sandbox`, `Xcode`, `LocalTesting`) goes
    /// to in a deployment whose own environment is production (`deploymentIsProduction`) or sandbox: everything
    /// but production data is the sandbox side of a production deployment; a sandbox deployment has one side.
    package static func of(environment: String, deploymentIsProduction: Bool) -> LedgerSide {
        deploymentIsProduction && environment != "Production" ? .sandbox : .primary
    }

    /// The keys' infix after the user's tag: nothing on the primary side, `sbx:` on the sandbox side.
    package var keyInfix: String {
        switch self {
        case .primary: ""
        case .sandbox: ":sbx"
        }
    }

    /// What an event, stream entry or answer calls the side: the value of ``PurchaseEvent/side`` and of the
    /// events' `side` field, nil for the primary side (whose keys, events and JSON are unchanged).
    package var label: String? { self == .sandbox ? "sandbox" : nil }

    /// The side a label names (absent: primary); nil when the label is not one.
    package init?(label: String?) {
        switch label {
        case nil: self = .primary
        case "sandbox": self = .sandbox
        default: return nil
        }
    }
}
