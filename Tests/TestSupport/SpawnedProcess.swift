package import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, for tests that run the package's executables.
///
/// Not Foundation's `Process`: on Linux (Swift 6.3.1) `Process.run()` intermittently crashes the whole test
/// runner with a bad pointer dereference in a `memcpy` — it copies each `/proc/self/fd` entry's full 256-byte
/// `d_name`, reading past glibc's `readdir` buffer (swift-corelibs-foundation PR #5472), and a test runner
/// with many sockets open hits it. Here the child gets an empty signal mask with default handlers (a test
/// runner's threads may block SIGTERM, which a child would inherit), every descriptor above 2 closed, and its
/// standard streams from files, never pipes, so no output can fill a pipe and stall it.
///
/// The child is reaped with `waitpid` on its own PID under `exitStatus`'s lock, so exactly once.
package final class SpawnedProcess: Sendable {
    /// Where one of the child's standard streams goes.
    package enum Stream: Sendable {
        case null
        /// Truncated, then written by the child.
        case file(URL)
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package let processIdentifier: pid_t
    private let exitStatus = Mutex<Int32?>(nil)

    private init(pid: pid_t) {
        processIdentifier = pid
    }

    /// Starts `executable` with `arguments` and exactly `environment`; standard input is `/dev/null` or
    /// the file `input`, standard output goes to `output`, standard error to `error` (nil: with the output).
    package static func spawn(
        _ executable: URL, arguments: [String], environment: [String: String], input: URL? = nil,
        output: Stream = .null, error: Stream? = nil
    ) throws -> SpawnedProcess {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        posix_spawn_file_actions_addopen(&files, 0, input?.path ?? "/dev/null", O_RDONLY, 0)
        for (descriptor, stream) in [(Int32(1), output), (Int32(2), error)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&files, descriptor, "/dev/null", O_WRONLY, 0)
            case .file(let url):
                posix_spawn_file_actions_addopen(&files, descriptor, url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case nil:
                posix_spawn_file_actions_adddup2(&files, 1, 2)
            }
        }
        if let closeFrom = Self.closeFrom { _ = closeFrom(&files, 3) }

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable.path, &files, &attributes, argv, envp)
        guard status == 0 else {
            throw Failure(description: "posix_spawn \(executable.path) failed: errno \(status)")
        }
        return SpawnedProcess(pid: child)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift's Glibc module does not
    /// import; without it the child inherits the runner's descriptors that lack `FD_CLOEXEC`.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// True until the child has exited (reaping it then).
    package var isRunning: Bool {
        exitStatus.withLock { exitStatus in
            guard exitStatus == nil else { return false }
            var status: Int32 = 0
            let result = waitpid(processIdentifier, &status, WNOHANG)
            if result == 0 { return true }
            exitStatus = result == processIdentifier ? status : -1
            return false
        }
    }

    /// Polls until the child has exited; false when `timeout` passed first.
    package func waitForExit(timeout: Duration = .seconds(120)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Blocks this thread until the child has exited.
    package func waitUntilExit() {
        exitStatus.withLock { exitStatus in
            guard exitStatus == nil else { return }
            var status: Int32 = 0
            var result: pid_t
            repeat {
                result = waitpid(processIdentifier, &status, 0)
            } while result == -1 && errno == EINTR
            exitStatus = result == processIdentifier ? status : -1
        }
    }

    /// Sends `signal` while the child runs.
    package func send(_ signal: Int32) {
        guard isRunning else { return }
        kill(processIdentifier, signal)
    }

    /// The exit code, or the signal number when a signal ended the child (like Foundation's `Process`);
    /// -1 while it runs.
    package var terminationStatus: Int32 {
        guard !isRunning, let status = exitStatus.withLock({ $0 }) else { return -1 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// True when a signal ended the child.
    package var terminatedBySignal: Bool {
        guard !isRunning, let status = exitStatus.withLock({ $0 }) else { return false }
        let signal = status & 0x7f
        return signal != 0 && signal != 0x7f
    }
}
