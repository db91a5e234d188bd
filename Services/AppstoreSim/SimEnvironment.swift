import AppStore
import Foundation

/// Parses Apple's environment names as the control API accepts them.
enum SimEnvironment {
    static func parse(_ raw: String?, field: String = "environment") throws(SimError) -> AppStoreEnvironment {
        switch raw {
        case nil, "Production", "production": return .production
        case "Sandbox", "sandbox": return .sandbox
        default: throw .invalid("\(field) must be Production or Sandbox")
        }
    }
}
