import Core

/// What each service key may make of the jobs that ask Apple (`GET /v1/lookup?orderId=`, `POST /v1/admin/apple/…`):
/// a fleet-wide request rate with a burst (past it `429 key_rate_limited`, `Retry-After`) and a number of unfinished
/// jobs (past it `429 key_too_many_in_flight`). The same for every key (`TOLLGATE_SERVICE_KEY_RATE`, `_BURST`,
/// `_MAX_IN_FLIGHT`) unless `TOLLGATE_SERVICE_KEY_LIMITS` names the key: `name=rate/burst/inFlight`, comma-separated,
/// e.g. `support=0.5/5/2,ops=5/20/20`.
package struct ServiceKeyLimits: Sendable, Equatable {
    /// One key's bounds.
    package struct Limit: Sendable, Equatable {
        /// Job-making calls per second (fractional allowed).
        package var ratePerSecond: Double
        /// The most such calls at once after a pause.
        package var burst: Int
        /// The key's unfinished jobs at which more are refused (0: no limit).
        package var maxInFlight: Int

        package init(ratePerSecond: Double, burst: Int, maxInFlight: Int) {
            (self.ratePerSecond, self.burst, self.maxInFlight) = (ratePerSecond, burst, maxInFlight)
        }
    }

    /// Every key's unless named in ``perKey``: 1 call a second, a burst of 10, 10 unfinished.
    package var standard = Limit(ratePerSecond: 1, burst: 10, maxInFlight: 10)
    /// By key name (`TOLLGATE_SERVICE_KEY_LIMITS`).
    package var perKey: [String: Limit] = [:]

    package init() {}

    /// The bounds of the key named `name`.
    package func limit(for name: String) -> Limit { perKey[name] ?? standard }

    /// Parses `TOLLGATE_SERVICE_KEY_LIMITS`' entries (`name=rate/burst/inFlight`) for the keys `names`; a problem as a
    /// sentence.
    package static func entries(_ entries: [String], names: Set<String>) -> Result<[String: Limit], ConfigurationProblem> {
        var limits: [String: Limit] = [:]
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { return .failure(.init("has '\(entry.prefix(64))', not name=rate/burst/inFlight")) }
            let name = String(parts[0])
            guard names.contains(name) else { return .failure(.init("names \(name.prefix(64)), which TOLLGATE_SERVICE_KEYS does not")) }
            guard limits[name] == nil else { return .failure(.init("names \(name) twice")) }
            let numbers = parts[1].split(separator: "/", omittingEmptySubsequences: false)
            guard numbers.count == 3, let rate = Double(numbers[0]), rate > 0, rate <= 100_000, let burst = Int(numbers[1]),
                (1...100_000).contains(burst), let inFlight = Int(numbers[2]), (0...10_000).contains(inFlight)
            else {
                return .failure(
                    .init("gives \(name) '\(parts[1].prefix(64))', not rate/burst/inFlight (rate > 0, burst 1-100000, inFlight 0-10000)"))
            }
            limits[name] = Limit(ratePerSecond: rate, burst: burst, maxInFlight: inFlight)
        }
        return .success(limits)
    }

    /// Why a setting is refused.
    package struct ConfigurationProblem: Error, Sendable {
        package var problem: String
        init(_ problem: String) { self.problem = problem }
    }
}
