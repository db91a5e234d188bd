#if canImport(Glibc)
import Glibc
#endif

/// Names the calling thread as `ps -L`, `top -H` and `perf` show it (Linux keeps 15 bytes). Foundation's
/// `Thread.name`, set before `start()`, never reaches the kernel on Linux, so Tollgate's own threads showed under the
/// name of whichever thread created them; each sets its name first thing instead. (Written to
/// `/proc/thread-self/comm`: Glibc's `pthread_setname_np` is not visible to Swift without `_GNU_SOURCE`.)
package func setCurrentThreadName(_ name: String) {
    #if canImport(Glibc)
    let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard file >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
    close(file)
    #endif
}
