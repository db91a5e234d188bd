import AppStore
import ArgumentParser
import Core
import Foundation
import Pipeline

/// `--project ID` of the commands that name a user or scan the ledger (docs/PROJECTS.md): which project's ledger they
/// read or change, `default` when not given. With `TOLLGATE_APPS` set, the id must be one of its projects
/// (`unknown_project` otherwise), so a typo never reads an empty ledger and reports it clean.
struct ProjectOption: ParsableArguments {
    @Option(name: .customLong("project"), help: "The project (docs/PROJECTS.md); default: default.")
    var id: String?

    func validate() throws {
        if let id, ProjectID(id) == nil { throw ValidationError("--project must be 1-32 of a-z, 0-9 and '-'") }
    }

    /// Whether `--project` was given.
    var isGiven: Bool { id != nil }

    /// The project named, checked against the configured ones.
    func resolve(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ProjectID {
        let project = id.flatMap { ProjectID($0) } ?? .default
        let configured = try Self.configured(environment)
        guard configured.contains(project) else {
            throw ToolError(
                "unknown_project",
                "\(project) is not a project of TOLLGATE_APPS (\(configured.map(\.rawValue).joined(separator: ", ")))")
        }
        return project
    }

    /// The deployment's projects: those `TOLLGATE_APPS` lists (read by the services' rules), else `default` alone.
    static func configured(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> [ProjectID] {
        let reader = EnvironmentReader(environment)
        guard reader.optional(AppRegistry.variable) != nil else { return [.default] }
        return try AppRegistry(reader: reader).projects.map(\.id)
    }
}
