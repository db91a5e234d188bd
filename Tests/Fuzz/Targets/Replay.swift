#if !FUZZING
import Core
import Foundation

/// The ordinary build's `main`: every input once through a target's check, without libFuzzer (the fuzzer's own
/// `main` replaces this under `-DFUZZING`). For a seed corpus, a crash file from `scripts/fuzz`, or a debugger.
@main
enum Replay {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first else { FuzzCommandLine.fail("no target named") }
        if name == "--version" {
            print(TollgateVersion.line(tool: "tollgate-fuzz"))
            return
        }
        if name == "--list" {
            print(FuzzCommandLine.list)
            return
        }
        guard let target = FuzzTarget.named(name) else { FuzzCommandLine.fail("unknown target '\(name)'") }
        let paths = arguments.count > 1 ? Array(arguments.dropFirst()) : [corpus.appendingPathComponent(name).path]
        var inputs = 0
        var failures = 0
        var slowest: (seconds: Double, path: String) = (0, "")
        for file in paths.flatMap(files) {
            guard let data = FileManager.default.contents(atPath: file) else { FuzzCommandLine.fail("cannot read \(file)") }
            let start = ContinuousClock.now
            do {
                try target.check(Array(data))
            } catch {
                print("\(name): \(file): \(error.description)")
                failures += 1
            }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if seconds > slowest.seconds { slowest = (seconds, file) }
            inputs += 1
        }
        let slow = String(format: "%.1f ms", slowest.seconds * 1000)
        print("\(name): \(inputs) inputs, \(failures) failed, slowest \(slow) (\(URL(fileURLWithPath: slowest.path).lastPathComponent))")
        if failures > 0 || inputs == 0 { exit(1) }
    }

    /// `Tests/Fuzz/Corpus`, found from this file's path.
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Corpus")

    /// A file, or the files of a directory (sorted, not recursive).
    static func files(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            FuzzCommandLine.fail("no such file or directory: \(path)")
        }
        guard isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { (path as NSString).appendingPathComponent($0) }
    }
}
#endif
