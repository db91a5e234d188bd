/// The summary form of `XPENDING stream group`.
public struct PendingSummary: Sendable {
    public var count: Int
    public var smallestID: String?
    public var largestID: String?
    /// Pending entries per consumer name.
    public var consumers: [String: Int]

    public init(count: Int, smallestID: String?, largestID: String?, consumers: [String: Int]) {
        self.count = count
        self.smallestID = smallestID
        self.largestID = largestID
        self.consumers = consumers
    }
}
