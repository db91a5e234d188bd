import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` into the `Core` module: `buildCommit()`, the commit the binary was built from, so that
/// every executable's `--version` names it (``Core/TollgateVersion``). The commit is, in order: `git rev-parse HEAD`
/// in the package's folder; else the first line of `.build-commit` there (the images' builder writes it from the
/// `COMMIT` build argument, having no `.git`); else `unknown`. The command runs again whenever git moves `HEAD`
/// (its reflog, `logs/HEAD`, is the input), and only the generated file is compiled again then.
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("BuildCommit.swift")
        return [
            .buildCommand(
                displayName: "Writing the build's commit", executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", Self.script, "build-info", package.path, output.path],
                inputFiles: Self.headLog(package: package).map { [$0] } ?? [], outputFiles: [output])
        ]
    }

    /// `logs/HEAD` of the package's git directory (`.git` itself, or the one a worktree's `.git` file names).
    static func headLog(package: URL) -> URL? {
        let dotGit = package.appendingPathComponent(".git")
        var directory = dotGit
        if let text = try? String(contentsOf: dotGit, encoding: .utf8), text.hasPrefix("gitdir:") {
            let path = text.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespacesAndNewlines)
            directory = URL(fileURLWithPath: path, relativeTo: package)
        }
        let log = directory.appendingPathComponent("logs/HEAD")
        return FileManager.default.fileExists(atPath: log.path) ? log : nil
    }

    /// `$1` the package's folder, `$2` the file to write. The commit must be hex (anything else reads `unknown`).
    static let script = #"""
        commit="$(git -C "$1" rev-parse HEAD 2>/dev/null)" || commit=""
        [ -n "$commit" ] || commit="$(head -n 1 "$1/.build-commit" 2>/dev/null)" || commit=""
        case "$commit" in ""|*[!0-9a-f]*) commit=unknown ;; esac
        printf '// Written by Plugins/BuildInfo at build time.\npackage func buildCommit() -> String { "%s" }\n' "$commit" > "$2"
        """#
}
