/// One row of the extended form of `XPENDING`.
package struct PendingEntry: Sendable {
    package var id: String
    package var consumer: String
    /// Time since the entry was last delivered.
    package var idle: Duration
    package var deliveryCount: Int

    package init(id: String, consumer: String, idle: Duration, deliveryCount: Int) {
        self.id = id
        self.consumer = consumer
        self.idle = idle
        self.deliveryCount = deliveryCount
    }
}
