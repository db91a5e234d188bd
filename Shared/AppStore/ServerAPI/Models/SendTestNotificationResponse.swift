/// The answer of Request a Test Notification: Apple's `SendTestNotificationResponse`.
package struct SendTestNotificationResponse: Codable, Sendable, Hashable {
    /// Identifies the test notification for Get Test Notification Status.
    package var testNotificationToken: String

    package init(testNotificationToken: String) {
        self.testNotificationToken = testNotificationToken
    }
}
