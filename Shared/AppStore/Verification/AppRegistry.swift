package import Core

/// The apps (bundle IDs) of one deployment — an iOS app and its macOS build, say, sharing one account system and one
/// ledger — with what Tollgate holds for each (``ConfiguredApp``): its identity, its App Store Server API key, its
/// shared secret, its subscription-offer key. Read in one place, by verifier, ingest and tollctl alike:
///
/// - `TOLLGATE_APPS` — the path of a JSON file listing the apps (``init(file:environment:)`` says its shape and
///   rules). It replaces the per-app variables, which may then not be set.
/// - without it, the one-app shorthand: `TOLLGATE_BUNDLE_ID` (required), `TOLLGATE_APP_APPLE_ID` (required in
///   production), `TOLLGATE_API_KEY_ID`/`_ISSUER_ID`/`_PRIVATE_KEY_PATH` (all or none), `TOLLGATE_SHARED_SECRET`,
///   `TOLLGATE_OFFER_KEY_ID`/`_ISSUER_ID`/`_PRIVATE_KEY_PATH` (all or none).
/// - `TOLLGATE_ENVIRONMENT` and `TOLLGATE_ACCEPT_SANDBOX` are the deployment's, for every app.
///
/// Which app a payload belongs to is always what Apple signed into it (its `bundleId`, and in production its
/// `appAppleId`), never what a client says; the registry only answers whether that app is one of the deployment's and
/// which key speaks for it, and which project (``ConfiguredProject``, docs/PROJECTS.md) it belongs to: a deployment
/// without projects is the one project `default`.
package struct AppRegistry: Sendable, Hashable {
    /// Every app of every project; the first is the default (offers without a `bundleId`, operators' calls that name
    /// none).
    package private(set) var apps: [ConfiguredApp]
    /// The projects, each listing its apps' bundle IDs; every app is in exactly one.
    package private(set) var projects: [ConfiguredProject]
    package var environment: AppStoreEnvironment
    package var acceptsSandbox: Bool

    /// A registry of `apps` (at least one, bundle IDs distinct: the file reader checks both) in `projects` (nil: all
    /// in the project `default`).
    package init(
        apps: [ConfiguredApp], projects: [ConfiguredProject]? = nil, environment: AppStoreEnvironment = .sandbox,
        acceptsSandbox: Bool = false
    ) {
        self.apps = apps
        self.projects = projects ?? [ConfiguredProject(id: .default, bundleIds: apps.map(\.bundleId))]
        self.environment = environment
        self.acceptsSandbox = acceptsSandbox
    }

    /// Whether the file lists projects of its own (`{"projects": …}`), rather than the one project `default`.
    package var hasProjects: Bool { projects.count > 1 || projects.first?.id != .default }

    /// The project of the app `bundleId` (as Apple signed it), or nil when no configured app has it.
    package func project(ofApp bundleId: String?) -> ProjectID? {
        guard let bundleId else { return nil }
        return projects.first { $0.bundleIds.contains(bundleId) }?.id
    }

    /// The configured project `id`, or nil.
    package func project(_ id: ProjectID) -> ConfiguredProject? { projects.first { $0.id == id } }

    /// The default app.
    package var defaultApp: ConfiguredApp { apps[0] }

    /// The configured app with this bundle ID, or nil.
    package func app(_ bundleId: String?) -> ConfiguredApp? {
        guard let bundleId else { return nil }
        return apps.first { $0.bundleId == bundleId }
    }

    /// The apps' identities, as the signature checks take them.
    package var identity: AppIdentity {
        AppIdentity(
            bundleId: defaultApp.bundleId, appAppleId: defaultApp.appAppleId, environment: environment,
            acceptsSandbox: acceptsSandbox, additionalApps: apps.dropFirst().map(\.identity))
    }
}
