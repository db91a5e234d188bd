import Foundation

/// A setting `appstore-sim` cannot start with.
struct SimConfigurationError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
