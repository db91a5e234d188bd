import Testing

@testable import Redis

@Suite("Reconnect backoff")
struct ReconnectBackoffTests {
    @Test func firstAttemptAfterHealthyPeriodIsImmediate() {
        var backoff = ReconnectBackoff()
        #expect(backoff.delay() == .zero)
        backoff.recordFailure()
        backoff.recordSuccess()
        #expect(backoff.delay() == .zero)
    }

    @Test func growsExponentiallyWithJitterAndIsCapped() {
        var backoff = ReconnectBackoff(base: .milliseconds(50), cap: .seconds(2))
        var ceilings: [Duration] = []
        for _ in 1...10 {
            backoff.recordFailure()
            let samples = (0..<200).map { _ in backoff.delay() }
            let ceiling = samples.max() ?? .zero
            ceilings.append(ceiling)
            let expected = min(Duration.milliseconds(50) * (1 << (backoff.consecutiveFailures - 1)), .seconds(2))
            #expect(samples.allSatisfy { $0 >= expected / 2 && $0 <= expected })
            #expect(Set(samples).count > 1, "jittered")
        }
        #expect(ceilings.last ?? .zero <= .seconds(2))
        #expect(ceilings[0] <= .milliseconds(50))
        #expect(ceilings[3] > .milliseconds(200))
    }
}
