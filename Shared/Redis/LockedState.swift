import Foundation

/// A value guarded by a lock.
///
/// `@unchecked Sendable` is safe: `value` is private and only reached through `withLock`, which holds the
/// `NSLock` for the whole access; callers must not let `inout` references escape the closure.
final class LockedState<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
