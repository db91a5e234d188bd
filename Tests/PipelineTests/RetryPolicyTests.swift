import Pipeline
import Testing

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(base: .milliseconds(100), cap: .seconds(1), maxAttempts: 10)

    @Test func ceilingDoublesPerAttemptUpToTheCap() {
        #expect(policy.ceiling(afterAttempt: 1) == .milliseconds(100))
        #expect(policy.ceiling(afterAttempt: 2) == .milliseconds(200))
        #expect(policy.ceiling(afterAttempt: 3) == .milliseconds(400))
        #expect(policy.ceiling(afterAttempt: 4) == .milliseconds(800))
        #expect(policy.ceiling(afterAttempt: 5) == .seconds(1))
        #expect(policy.ceiling(afterAttempt: 500) == .seconds(1))
    }

    @Test func fullJitterSpansZeroToTheCeiling() {
        #expect(policy.delay(afterAttempt: 3, unitRandom: 0) == .zero)
        #expect(policy.delay(afterAttempt: 3, unitRandom: 0.5) == .milliseconds(200))
        #expect(policy.delay(afterAttempt: 3, unitRandom: 0.999_999) == .milliseconds(399))
        #expect(policy.delay(afterAttempt: 9, unitRandom: 0.5) == .milliseconds(500))
        // Out-of-range random values are clamped, never beyond the ceiling.
        #expect(policy.delay(afterAttempt: 2, unitRandom: 7) == .milliseconds(200))
        #expect(policy.delay(afterAttempt: 2, unitRandom: -1) == .zero)
    }

    @Test func systemRandomStaysWithinBounds() {
        for attempt in 1...12 {
            let ceiling = policy.ceiling(afterAttempt: attempt)
            for _ in 0..<200 {
                let delay = policy.delay(afterAttempt: attempt, unitRandom: Double.random(in: 0..<1))
                #expect(delay >= .zero && delay <= ceiling)
            }
        }
    }
}
