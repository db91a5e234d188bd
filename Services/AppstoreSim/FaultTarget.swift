import Foundation

/// What a fault applies to.
enum FaultTarget: String, Sendable, Codable, CaseIterable {
    case verifyReceipt
    case api
    case notifications
}
