import Foundation

/// What the fuzzer and the replay share: the target named in the environment, the list, the usage.
enum FuzzCommandLine {
    static let targetVariable = "TOLLGATE_FUZZ_TARGET"

    /// The target `TOLLGATE_FUZZ_TARGET` names (set from the first argument under libFuzzer).
    static let selected: FuzzTarget? = ProcessInfo.processInfo.environment[targetVariable].flatMap(FuzzTarget.named)

    static var list: String {
        FuzzTarget.all.map { "\($0.name)\t\($0.maxLength)\t\($0.summary)" }.joined(separator: "\n")
    }

    static let usage = """
        usage: tollgate-fuzz NAME [FILE|DIR…]   replay inputs through NAME's check (default: its seed corpus)
               tollgate-fuzz --list             the targets
               tollgate-fuzz --version          the version and commit
        built with -sanitize=fuzzer (scripts/fuzz): tollgate-fuzz NAME [libFuzzer flags] [CORPUS…]
        """

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("tollgate-fuzz: \(message)\n\(usage)\ntargets:\n\(list)\n".utf8))
        exit(2)
    }
}
