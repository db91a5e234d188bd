/// Runs `body` with `resource`, then stops it with `stop`, awaited, whether `body` returned or threw. A
/// `defer { Task { await resource.stop() } }` left the stop to run after the test had ended (or never, when the
/// process exited first), so a test's server or child process could outlive it.
@discardableResult
package func withStarted<Resource, T>(
    _ resource: Resource, stop: (Resource) async -> Void, _ body: (Resource) async throws -> T
) async throws -> T {
    do {
        let result = try await body(resource)
        await stop(resource)
        return result
    } catch {
        await stop(resource)
        throw error
    }
}

/// Runs `body` with a started ``StubHTTPServer``, and stops it (awaited) afterwards, even when `body` throws.
@discardableResult
package func withStubServer<T>(_ body: (StubHTTPServer) async throws -> T) async throws -> T {
    try await withStarted(try await StubHTTPServer.start(), stop: { await $0.stop() }, body)
}
