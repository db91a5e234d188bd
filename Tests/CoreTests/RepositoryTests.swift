import Core
import Foundation
import TestSupport
import Testing

/// What the repository says about itself agrees with what it builds (docs/OPERATIONS.md, CONTRIBUTING.md): the
/// README's list of executables is Package.swift's, `scripts/images` builds every image compose runs, and every
/// executable answers `--version` with this build's version and commit.
@Suite struct RepositoryTests {
    static func file(_ path: String) throws -> String {
        try String(contentsOf: Vectors.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// The names of `.executable(name: "…")` in Package.swift's products.
    static func packageExecutables() throws -> [String] {
        try names(in: file("Package.swift"), after: #".executable(name: ""#, until: "\"")
    }

    /// Every `<prefix>NAME<terminator>` in `text`, in order.
    static func names(in text: String, after prefix: String, until terminator: Character) -> [String] {
        text.components(separatedBy: prefix).dropFirst().compactMap { part in
            part.firstIndex(of: terminator).map { String(part[..<$0]) }
        }
    }

    @Test func readmeListsExactlyThePackagesExecutables() throws {
        let readme = try Self.file("README.md")
        let section = try #require(readme.components(separatedBy: "\n## Executables\n").dropFirst().first, "no ## Executables")
        let listed = section.components(separatedBy: "\n## ").first.map { text in
            text.split(separator: "\n").filter { $0.hasPrefix("- `") }.map { line in
                String(line.dropFirst(3).prefix { $0 != "`" })
            }
        }
        let executables = try Self.packageExecutables()
        #expect(executables.count >= 7, "Package.swift's products were not read")
        #expect(listed == executables, "README's ## Executables and Package.swift's products differ")
    }

    @Test func imagesBuildsEveryImageComposeNames() async throws {
        var named: Set<String> = []
        for compose in ["compose/docker-compose.yml", "compose/sim.yml", "compose/smoke.yml"] {
            for line in try Self.file(compose).split(separator: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("image: tollgate/") else { continue }
                named.insert(String(trimmed.dropFirst("image: ".count).prefix { $0 != ":" }))
            }
        }
        let (status, output) = try await Self.run(
            URL(fileURLWithPath: "/bin/bash"), [Vectors.repositoryRoot.appendingPathComponent("scripts/images").path, "--list"])
        #expect(status == 0, "scripts/images --list: \(output)")
        let built = Set(output.split(separator: "\n").map(String.init))
        #expect(named.contains("tollgate/notifier") && named.contains("tollgate/appstore-sim"), "the compose files were not read")
        #expect(built == named, "scripts/images builds \(built.sorted()), compose runs \(named.sorted())")
    }

    @Test func everyExecutableAnswersVersionWithThisBuildsCommit() async throws {
        let commit = TollgateVersion.commit
        #expect(commit.count == 40 && commit.allSatisfy(\.isHexDigit), "this build's commit is \(commit)")
        for name in try Self.packageExecutables() {
            let (status, output) = try await Self.run(try ChildProcess.binaryURL(name), ["--version"])
            #expect(status == 0, "\(name) --version exited \(status): \(output)")
            #expect(output == "\(name) \(TollgateVersion.version) (commit \(commit))\n", "\(name) --version answered \(output)")
        }
    }

    /// Runs `executable` to its end; its exit status and its output and error together.
    static func run(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-repository-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let process = try SpawnedProcess.spawn(
            executable, arguments: arguments, environment: ProcessInfo.processInfo.environment, output: .file(log))
        guard await process.waitForExit() else {
            process.send(SIGKILL)
            process.waitUntilExit()
            throw ChildProcess.Failure(description: "\(executable.lastPathComponent) did not finish")
        }
        return (process.terminationStatus, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }
}
