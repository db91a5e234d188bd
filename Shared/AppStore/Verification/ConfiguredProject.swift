package import Core

/// One project of a deployment (docs/PROJECTS.md): apps that share customers, with their own user space and ledger
/// (``Core/ProjectID``), their own catalog and their own user-token secret. Read from `TOLLGATE_APPS`
/// (``AppRegistry``); a deployment without projects is the one project `default`, whose catalog and secret are the
/// services' own variables (`TOLLGATE_CATALOG`, `TOLLGATE_CLIENT_JWT_SECRET`).
package struct ConfiguredProject: Sendable, Hashable {
    package var id: ProjectID
    /// The bundle IDs of its apps (each in exactly one project).
    package var bundleIds: [String]
    /// Its catalog's path (resolved against the apps file's folder); nil: the service's `TOLLGATE_CATALOG`.
    package var catalogPath: String?
    /// The HS256 secret its users' tokens are signed with; nil: ingest's `TOLLGATE_CLIENT_JWT_SECRET`. Never logged.
    package var clientJWTSecret: String?

    package init(id: ProjectID, bundleIds: [String], catalogPath: String? = nil, clientJWTSecret: String? = nil) {
        self.id = id
        self.bundleIds = bundleIds
        self.catalogPath = catalogPath
        self.clientJWTSecret = clientJWTSecret
    }
}

extension ConfiguredProject: CustomStringConvertible, CustomDebugStringConvertible {
    /// The project without its secret, so that a log line or a failed expectation never prints it.
    package var description: String {
        "ConfiguredProject(\(id), apps: \(bundleIds), catalog: \(catalogPath ?? "-"), secret: \(clientJWTSecret == nil ? "-" : "***"))"
    }

    package var debugDescription: String { description }
}
