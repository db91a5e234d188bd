/// The answer of Request a Test Notification: Apple's `SendTestNotificationResponse`.
public struct SendTestNotificationResponse: Codable, Sendable, Hashable {
    /// Identifies the test notification for Get Test Notification Status.
    public var testNotificationToken: String

    public init(testNotificationToken: String) {
        self.testNotificationToken = testNotificationToken
    }
}
