import Core
import Foundation

// libFuzzer's entry points. With `-sanitize=fuzzer` (scripts/fuzz) libFuzzer's `main` calls them; the ordinary build
// has them too, unused, and runs `Replay` instead.

/// The target the fuzzer drives: `tollgate-fuzz NAME [libFuzzer flags] [corpus…]`. The name is taken out of the
/// arguments before libFuzzer reads them and kept in `TOLLGATE_FUZZ_TARGET`, which the processes libFuzzer starts
/// itself (`-fork`, `-merge`, with the remaining arguments) inherit.
@_cdecl("LLVMFuzzerInitialize")
func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    guard let arguments = argv.pointee, argc.pointee > 1, let first = arguments[1].map({ String(cString: $0) }) else {
        guard FuzzCommandLine.selected != nil else { FuzzCommandLine.fail("no target named") }
        return 0
    }
    if first == "--list" {
        print(FuzzCommandLine.list)
        exit(0)
    }
    if first == "--version" {
        print(TollgateVersion.line(tool: "tollgate-fuzz"))
        exit(0)
    }
    if FuzzTarget.named(first) != nil {
        setenv(FuzzCommandLine.targetVariable, first, 1)
        for index in 1..<Int(argc.pointee) { arguments[index] = arguments[index + 1] }
        argc.pointee -= 1
    }
    guard FuzzCommandLine.selected != nil else {
        FuzzCommandLine.fail(first.hasPrefix("-") ? "no target named" : "unknown target '\(first)'")
    }
    return 0
}

/// One input: the selected target's check; a broken property aborts, so libFuzzer keeps the input as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let target = FuzzCommandLine.selected else { return -1 }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try target.check(bytes)
    } catch {
        FileHandle.standardError.write(Data("\n\(target.name): \(error.description)\n".utf8))
        abort()
    }
    return 0
}
