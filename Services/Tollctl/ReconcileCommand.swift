import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `tollctl reconcile [--since DATE] [--dry-run]`: runs one reconcile pass now — Apple's Notification History
/// from the checkpoint (or `--since`), the subscription sweep — and prints what it found, enqueued and
/// corrected. The pass needs the verifier's whole configuration (App Store Server API key, trusted roots,
/// Apple URLs, `TOLLGATE_*` as the verifier reads them), so it runs the `verifier` executable's one-shot mode
/// (`verifier reconcile …`) with this environment: the one found next to `tollctl`, or at
/// `TOLLGATE_VERIFIER_PATH`, or on `PATH`. It replaces this process (`execv`), so its output and exit status
/// are this command's.
struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Run one reconcile pass now: recover missed notifications, look up stale subscriptions.")

    @Option(help: ArgumentHelp(
        "Read Apple's history from this date instead of the checkpoint (which then does not move).",
        discussion: "2026-11-01, 2026-11-01T08:00:00Z or milliseconds since 1970."))
    var since: String?

    @Flag(help: "Print what would be enqueued and corrected; change nothing (Redis is only read).")
    var dryRun = false

    func run() async throws {
        guard let verifier = Self.verifierExecutable() else {
            UserLedgerConnection.fail(
                code: "verifier_not_found",
                message: "the verifier executable is not next to tollctl, at TOLLGATE_VERIFIER_PATH or on PATH")
        }
        var arguments = ["reconcile"]
        if let since { arguments += ["--since", since] }
        if dryRun { arguments.append("--dry-run") }
        // The verifier replaces this process (same PID, environment and terminal, so Ctrl-C and the exit
        // status are the verifier's); `execv` returns only when it could not be started.
        let argv: [UnsafeMutablePointer<CChar>?] = ([verifier.path] + arguments).map { strdup($0) } + [nil]
        execv(verifier.path, argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        UserLedgerConnection.fail(code: "verifier_not_started", message: "\(verifier.path): \(reason)")
    }

    /// `TOLLGATE_VERIFIER_PATH`, else `verifier` next to this executable, else on `PATH`.
    static func verifierExecutable() -> URL? {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [URL] = []
        if let path = environment["TOLLGATE_VERIFIER_PATH"], !path.isEmpty { candidates.append(URL(fileURLWithPath: path)) }
        if let own = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(own.deletingLastPathComponent().appendingPathComponent("verifier"))
        }
        for folder in (environment["PATH"] ?? "").split(separator: ":") where !folder.isEmpty {
            candidates.append(URL(fileURLWithPath: String(folder)).appendingPathComponent("verifier"))
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
