/// One row of the extended form of `XPENDING`.
public struct PendingEntry: Sendable {
    public var id: String
    public var consumer: String
    /// Time since the entry was last delivered.
    public var idle: Duration
    public var deliveryCount: Int

    public init(id: String, consumer: String, idle: Duration, deliveryCount: Int) {
        self.id = id
        self.consumer = consumer
        self.idle = idle
        self.deliveryCount = deliveryCount
    }
}
