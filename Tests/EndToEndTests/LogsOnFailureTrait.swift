import Testing

/// A test that throws prints the tail of every service's log (issues recorded while polling carry it
/// already).
struct LogsOnFailureTrait: TestTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        do {
            try await function()
        } catch {
            let logs = SystemHarness.current?.logTail() ?? "(no system)"
            print("\(test.name) threw \(error); the services' logs end with:\n\(logs)")
            throw error
        }
    }
}

extension Trait where Self == LogsOnFailureTrait {
    /// Prints the services' logs when the test throws.
    static var logsOnFailure: Self { LogsOnFailureTrait() }
}
