import AppStore
import AppStoreTesting
import Foundation
import Hummingbird
import Logging
import NIOCore

/// Builds the simulator: its state, the notification dispatcher (a service of the application) and the
/// routes. Tests call this directly with port 0 and read the bound port in `onServerRunning`.
func buildApplication(
    configuration: SimConfiguration,
    authority: TestCertificateAuthority,
    logger: Logger,
    clock: @escaping @Sendable () -> Date = { Date() },
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let store = SimStore(configuration: configuration, authority: authority, clock: clock)
    let faults = FaultInjector()
    let dispatcher = NotificationDispatcher(store: store, faults: faults, logger: logger)
    let router = Router(context: BasicRequestContext.self)
    VerifyReceiptRoutes(store: store, faults: faults).register(on: router)
    ServerAPIRoutes(
        store: store, faults: faults, dispatcher: dispatcher,
        authenticator: APIAuthenticator(publicKey: configuration.apiPublicKey, keys: configuration.apiKeys, now: clock)
    ).register(on: router)
    ControlRoutes(store: store, faults: faults, dispatcher: dispatcher, rootDER: authority.rootDER).register(on: router)
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "appstore-sim"),
        services: [dispatcher],
        onServerRunning: onServerRunning,
        logger: logger
    )
}
