/// Polls `condition` every `interval` until it holds or `timeout` passes; returns whether it held (asked once
/// more at the deadline).
package func eventually(
    timeout: Duration = .seconds(30), interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Polls `value` every `interval` until it is not nil or `timeout` passes.
package func eventuallyValue<T>(
    timeout: Duration = .seconds(30), interval: Duration = .milliseconds(20), _ value: () async throws -> T?
) async rethrows -> T? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let found = try await value() { return found }
        try? await Task.sleep(for: interval)
    }
    return try await value()
}
