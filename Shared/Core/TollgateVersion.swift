import Foundation

/// Which Tollgate a binary is: the release version (semantic versioning; CHANGELOG.md says what each one changes and
/// docs/UPGRADING.md what to do between them) and the commit it was built from (``buildCommit()``, written at build
/// time by `Plugins/BuildInfo`). Every executable answers `--version` with ``line(tool:)``.
package enum TollgateVersion {
    /// The release this tree is, or the last one it builds on: raised in the commit a release's tag names, so a
    /// tree past a tag (CHANGELOG.md's "Unreleased") carries that release's number and its commit tells them apart.
    package static let version = "0.9.0"

    /// The full commit hash, or `unknown` for a build from a tree without git and without a `COMMIT` build argument.
    package static var commit: String { buildCommit() }

    /// `<tool> 0.9.0 (commit 0123abcd…)`, the whole answer to `--version` (an argument parser's command carries it as
    /// its configuration's `version`).
    package static func line(tool: String) -> String {
        "\(tool) \(version) (commit \(commit))"
    }

    /// When `arguments` (the process's, without the program's name) is exactly `--version`: prints ``line(tool:)``
    /// and exits 0. For executables that parse no flags of their own (the services, read from the environment).
    package static func answerIfAsked(tool: String, arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        guard arguments == ["--version"] else { return }
        print(line(tool: tool))
        Foundation.exit(0)
    }
}
