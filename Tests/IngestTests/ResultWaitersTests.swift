import Testing

@testable import ingest

/// `?wait=`'s registry: a waiter returns at its job's signal, or at its deadline (one ticker for the whole
/// process, so at most one tick late), and never waits on after either.
@Suite(.timeLimit(.minutes(1))) struct ResultWaitersTests {
    @Test func aWaitEndsAtItsDeadline() async throws {
        let waiters = ResultWaiters()
        let id = try #require(await waiters.register(jobID: "job", user: "u"))
        let clock = ContinuousClock()
        let took = await clock.measure { await waiters.nextSignal(jobID: "job", id: id, timeout: .milliseconds(300)) }
        #expect(took >= .milliseconds(300))
        #expect(took < .seconds(10), "the ticker must end the wait about one tick after its deadline")
        await waiters.unregister(jobID: "job", id: id)
        #expect(await waiters.count == 0)
    }

    /// How long a 60-second wait of `id` on "job" lasts when `release` runs 100 ms into it.
    private func waitReleased(
        _ waiters: ResultWaiters, id: UInt64, by release: @Sendable () async -> Void
    ) async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        async let waited = waiters.nextSignal(jobID: "job", id: id, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        await release()
        _ = await waited
        return clock.now - start
    }

    @Test func aSignalEndsTheWaitLongBeforeItsDeadline() async throws {
        let waiters = ResultWaiters()
        let id = try #require(await waiters.register(jobID: "job", user: "u"))
        let clock = ContinuousClock()
        #expect(try await waitReleased(waiters, id: id) { await waiters.signal(jobID: "job") } < .seconds(10))
        // A signal that arrives between two waits is remembered: the next wait returns at once.
        await waiters.signal(jobID: "job")
        let again = await clock.measure { await waiters.nextSignal(jobID: "job", id: id, timeout: .seconds(60)) }
        #expect(again < .seconds(10))
    }

    /// A signal carrying the job hash (the ledger's final write) hands it to the waiter once; a message that is not
    /// an object of strings carries nothing; a process with no waiter for the job does not read it.
    @Test func aSignalCarriesTheJobHashToItsWaiter() async throws {
        let waiters = ResultWaiters()
        let id = try #require(await waiters.register(jobID: "job", user: "u"))
        async let carried = waiters.nextSignal(jobID: "job", id: id, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(50))
        await waiters.signal(jobID: "job", carrying: Array(#"{"state":"fulfilled","result":"{\"coins\":7}"}"#.utf8))
        #expect(await carried == ["state": "fulfilled", "result": #"{"coins":7}"#])
        // Remembered between waits like any signal, and handed over once.
        await waiters.signal(jobID: "job", carrying: Array(#"{"state":"rejected"}"#.utf8))
        #expect(await waiters.nextSignal(jobID: "job", id: id, timeout: .zero) == ["state": "rejected"])
        await waiters.signal(jobID: "job")
        #expect(await waiters.nextSignal(jobID: "job", id: id, timeout: .zero) == nil)
        for malformed in [#"{"state":1}"#, "[]", "not json", #"{"state":"fulfilled""#] {
            await waiters.signal(jobID: "job", carrying: Array(malformed.utf8))
            #expect(await waiters.nextSignal(jobID: "job", id: id, timeout: .zero) == nil, "\(malformed)")
        }
        #expect(ResultWaiters.stringFields(Array(#"{"a":"b","c":"d"}"#.utf8)) == ["a": "b", "c": "d"])
    }

    @Test func waitersWithDifferentDeadlinesEachEndAtTheirOwn() async throws {
        let waiters = ResultWaiters()
        let clock = ContinuousClock()
        let start = clock.now
        let ends = await withTaskGroup(of: (Int, Duration).self) { group in
            for (index, milliseconds) in [150, 600, 6000].enumerated() {
                guard let id = await waiters.register(jobID: "job-\(index)", user: "user-\(index)") else { continue }
                group.addTask {
                    await waiters.nextSignal(jobID: "job-\(index)", id: id, timeout: .milliseconds(milliseconds))
                    return (milliseconds, clock.now - start)
                }
            }
            var ends: [(Int, Duration)] = []
            for await end in group { ends.append(end) }
            return ends
        }
        #expect(ends.count == 3)
        for (milliseconds, took) in ends {
            #expect(took >= .milliseconds(milliseconds))
            // Only a guard against a hang: a loaded CI machine (a full parallel run) has been seen 3.3 s late.
            #expect(took < .milliseconds(milliseconds) + .seconds(10))
        }
        // Each at its own deadline, not all at the longest one's: the 150 ms waiter ends well before the 6 s one.
        // (A full parallel run has stalled this process for ~3 s, waking every due timer at once: the 6 s deadline
        // keeps such a stall from looking like the bug, and no wall-clock bound below 10 s is asserted.)
        let byDeadline = ends.sorted { $0.0 < $1.0 }.map(\.1)
        if let first = byDeadline.first, let last = byDeadline.last {
            #expect(last - first > .seconds(2), "\(ends)")
        }
        // Nothing suspended any more: a later wait still gets its deadline (the ticker starts again).
        let id = try #require(await waiters.register(jobID: "late", user: "late"))
        let took = await clock.measure { await waiters.nextSignal(jobID: "late", id: id, timeout: .milliseconds(200)) }
        #expect(took >= .milliseconds(200) && took < .seconds(10))
    }

    @Test func unregisteringASuspendedWaiterReleasesIt() async throws {
        let waiters = ResultWaiters()
        let id = try #require(await waiters.register(jobID: "job", user: "u"))
        #expect(try await waitReleased(waiters, id: id) { await waiters.unregister(jobID: "job", id: id) } < .seconds(10))
        #expect(await waiters.count == 0)
    }

    /// Signals racing each wait's start (sent from other tasks, as the listener sends them) are never lost: one before
    /// the wait suspends is remembered and ends it at once, one after wakes it. A lost signal would hold its wait to
    /// the 20-second deadline and return no carried status, which the check below catches (no time bound: a loaded
    /// CI machine once took 12 s for the whole group).
    @Test func signalsRacingTheWaitAreNeverLost() async throws {
        let waiters = ResultWaiters(maxWaiters: 1000, maxPerUser: 1000)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<500 {
                guard let id = await waiters.register(jobID: "job-\(index)", user: "u") else { continue }
                group.addTask {
                    await waiters.signal(jobID: "job-\(index)", carrying: Array(#"{"state":"fulfilled"}"#.utf8))
                }
                group.addTask {
                    let carried = await waiters.nextSignal(jobID: "job-\(index)", id: id, timeout: .seconds(20))
                    #expect(carried == ["state": "fulfilled"])
                    await waiters.unregister(jobID: "job-\(index)", id: id)
                }
            }
        }
        #expect(await waiters.count == 0)
    }
}
