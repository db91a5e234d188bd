import Testing
import Webhooks

@Suite struct CircuitBreakerTests {
    @Test func opensAfterTheThresholdProbesOnceAndClosesOnSuccess() {
        var breaker = CircuitBreaker(threshold: 3, cooldown: .seconds(5), maximumCooldown: .seconds(60))
        for _ in 0..<2 { breaker.recordFailure(now: 1000) }
        #expect(breaker.allowance(now: 1000) == .closed)
        breaker.recordFailure(now: 1000)
        #expect(breaker.allowance(now: 1000) == .open(until: 6000))
        #expect(breaker.allowance(now: 6000) == .probe)
        breaker.beginProbe()
        // One probe at a time.
        #expect(breaker.allowance(now: 6001) == .open(until: 6101))
        breaker.recordSuccess()
        #expect(breaker.allowance(now: 6002) == .closed)
    }

    @Test func aFailedProbeOpensItTwiceAsLongUpToTheMaximum() {
        var breaker = CircuitBreaker(threshold: 1, cooldown: .seconds(5), maximumCooldown: .seconds(12))
        breaker.recordFailure(now: 0)
        #expect(breaker.allowance(now: 0) == .open(until: 5000))
        breaker.beginProbe()
        breaker.recordFailure(now: 5000)
        #expect(breaker.allowance(now: 5000) == .open(until: 15000))
        breaker.beginProbe()
        breaker.recordFailure(now: 15000)
        #expect(breaker.allowance(now: 15000) == .open(until: 27000))
    }
}

extension CircuitBreakerTests {
    @Test func aProbeThatSentNothingLetsTheNextProbeGo() {
        var breaker = CircuitBreaker(threshold: 1, cooldown: .seconds(1), maximumCooldown: .seconds(10))
        breaker.recordFailure(now: 0)
        #expect(breaker.allowance(now: 1000) == .probe)
        breaker.beginProbe()
        breaker.endProbe()
        #expect(breaker.allowance(now: 1001) == .probe)
    }
}

extension CircuitBreakerTests {
    @Test func failuresOfRequestsInFlightWhenItOpenedDoNotStretchIt() {
        var breaker = CircuitBreaker(threshold: 2, cooldown: .seconds(5), maximumCooldown: .seconds(300))
        breaker.recordFailure(now: 0)
        breaker.recordFailure(now: 0)
        #expect(breaker.allowance(now: 0) == .open(until: 5000))
        // Sixty more requests that were in flight time out meanwhile.
        for _ in 0..<60 { breaker.recordFailure(now: 1000) }
        #expect(breaker.allowance(now: 1000) == .open(until: 5000))
        #expect(breaker.allowance(now: 5000) == .probe)
    }
}

extension CircuitBreakerTests {
    /// Another replica's open breaker, read from Redis: this one opens until the same time (never shorter than its own),
    /// then probes, and a failed probe doubles as after an opening of its own.
    @Test func anAdoptedOpeningHoldsUntilItsTimeThenProbesAndDoubles() {
        var breaker = CircuitBreaker(threshold: 5, cooldown: .seconds(5), maximumCooldown: .seconds(300))
        breaker.adopt(openUntil: 4000, now: 1000)
        #expect(breaker.allowance(now: 1000) == .open(until: 4000))
        // An earlier time than the one held, or one already past, changes nothing.
        breaker.adopt(openUntil: 3000, now: 1000)
        breaker.adopt(openUntil: 900, now: 1000)
        #expect(breaker.allowance(now: 2000) == .open(until: 4000))
        #expect(breaker.allowance(now: 4000) == .probe)
        breaker.beginProbe()
        breaker.recordFailure(now: 4000)
        #expect(breaker.allowance(now: 4000) == .open(until: 14000))
        breaker.beginProbe()
        breaker.recordSuccess()
        #expect(breaker.allowance(now: 14001) == .closed)
    }

    @Test func aTimeInThePastIsNotAdopted() {
        var breaker = CircuitBreaker(threshold: 1, cooldown: .seconds(5), maximumCooldown: .seconds(60))
        breaker.adopt(openUntil: 500, now: 1000)
        #expect(breaker.allowance(now: 1000) == .closed)
        #expect(!breaker.isOpen)
    }
}
