import AppStore
import Core

/// The API clients an operator's command asks Apple with: a command names a transaction or an order, not an app.
enum OperatorClients {
    /// No app of `project` has an App Store Server API key.
    static func apiNotConfigured(in project: ProjectID) -> VerificationError {
        project.isDefault
            ? VerificationError.apiNotConfigured
            : VerificationError("api_not_configured", "no app of project \(project) has an App Store Server API key (TOLLGATE_APPS)")
    }

    /// The first environment's answer that is not a 404 (in the order of `clients`), with the client that gave it;
    /// the last 404 when all are.
    static func firstFound<T>(
        _ clients: [(AppStoreEnvironment, AppStoreServerAPIClient)], _ call: (AppStoreServerAPIClient) async throws -> T
    ) async throws -> (AppStoreEnvironment, AppStoreServerAPIClient, T) {
        guard !clients.isEmpty else { throw VerificationError.apiNotConfigured }
        var notFound: (any Error)?
        for (environment, client) in clients {
            do {
                return (environment, client, try await call(client))
            } catch let error as AppStoreAPIError where error.httpStatus == 404 {
                notFound = error
            }
        }
        throw notFound ?? VerificationError.apiNotConfigured
    }

    /// The API clients by environment, production first, and within one the apps in configuration order (the default
    /// first): an operator's command names a transaction, not an app, so each app's client is asked in turn, and Apple
    /// answers 404 for another app's transaction.
    static func ordered(_ clients: AppleAPIClients) -> [(AppStoreEnvironment, AppStoreServerAPIClient)] {
        clients.environments.flatMap { environment in clients.clients(in: environment).map { (environment, $0.client) } }
    }

    /// ``ordered(_:)`` of the apps of `project` only (docs/PROJECTS.md): an operator's call of one project
    /// never asks Apple with another project's key, so another project's purchases are not found.
    static func ordered(
        _ clients: AppleAPIClients, of project: ProjectID, configuration: VerifierConfiguration
    ) -> [(AppStoreEnvironment, AppStoreServerAPIClient)] {
        clients.environments.flatMap { environment in
            clients.clients(in: environment).filter { configuration.project(ofApp: $0.bundleId) == project }
                .map { (environment, $0.client) }
        }
    }
}
