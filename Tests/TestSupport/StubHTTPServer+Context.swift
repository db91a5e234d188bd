import Hummingbird

/// The request context of a ``StubHTTPServer``: Hummingbird's basics plus the client's port, so tests can
/// tell whether two requests came over the same (kept-alive) connection.
struct StubRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remotePort: Int?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remotePort = source.channel.remoteAddress?.port
    }
}
