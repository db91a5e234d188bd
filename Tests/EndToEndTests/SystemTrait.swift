import Testing

/// Runs a whole suite (with its nested suites) against one ``SystemHarness``: started once before the
/// suite's first test, stopped after its last, available to each test as ``SystemHarness/current``.
/// Tests share the system safely by each using their own users. After the last test, the system must
/// settle: no pending entries, retries or dead letters, and a clean `tollctl audit`.
///
/// Not recursive: Swift Testing 6.3 traps in `Runner.Plan._recursivelyApplyTraits` when a recursive
/// suite trait meets suites nested in extensions; tests take ``LogsOnFailureTrait`` instead.
struct SystemTrait: SuiteTrait, TestScoping {
    var options = SystemHarness.Options()

    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await SystemHarness.with(options) { system in
            try await SystemHarness.$current.withValue(system) { try await function() }
            try await system.expectQuietAndConsistent()
        }
    }
}

extension Trait where Self == SystemTrait {
    /// One production Tollgate deployment (two verifier and two fulfiller replicas) for the whole suite.
    static var tollgateSystem: Self { SystemTrait() }

    /// A production deployment of two apps (``SystemHarness/Options/twoApps``), one replica of each worker.
    static func tollgateSystem(twoApps: Bool) -> Self {
        SystemTrait(options: SystemHarness.Options(replicas: 1, twoApps: twoApps))
    }

    /// A production deployment of two projects (``SystemHarness/Options/twoProjects``), one replica of each worker.
    static func tollgateSystem(twoProjects: Bool) -> Self {
        SystemTrait(options: SystemHarness.Options(replicas: 1, twoProjects: twoProjects))
    }
}
