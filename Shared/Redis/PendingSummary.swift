/// The summary form of `XPENDING stream group`.
package struct PendingSummary: Sendable {
    package var count: Int
    package var smallestID: String?
    package var largestID: String?
    /// Pending entries per consumer name.
    package var consumers: [String: Int]

    package init(count: Int, smallestID: String?, largestID: String?, consumers: [String: Int]) {
        self.count = count
        self.smallestID = smallestID
        self.largestID = largestID
        self.consumers = consumers
    }
}
