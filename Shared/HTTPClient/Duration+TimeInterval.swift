package import Foundation

extension Duration {
    /// The duration in seconds, as Foundation's `TimeInterval`.
    package var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
