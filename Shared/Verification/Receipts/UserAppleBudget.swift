import AppStore
import Pipeline
import Redis

/// What one user's submissions may make Tollgate ask Apple: `TOLLGATE_USER_APPLE_CALLS` calls per hour, a
/// fleet-wide token bucket in the user's slot (`tg:{u:<userId>}:apple.calls`), one token per call (each
/// `verifyReceipt`, each page of the Server API). Past it the job waits (retryable `user_apple_budget_spent`, with
/// the bucket's wait as its delay): a user posting receipts over and over cannot turn Tollgate into a client of
/// Apple's on their behalf.
enum UserAppleBudget {
    static func key(_ keys: Keys, user: String) -> String { "\(keys.projectPrefix):\(keys.userTag(user)):apple.calls" }

    /// The gate for `user`'s job, or nil when there is no limit.
    static func gate(
        user: String?, callsPerHour: Int, keys: Keys, redis: any RedisCommandExecutor
    ) -> AppleCallGate? {
        guard let user, !user.isEmpty, callsPerHour > 0 else { return nil }
        let bucket = TokenBucket(
            key: key(keys, user: user), ratePerSecond: Double(callsPerHour) / 3600, capacity: Double(callsPerHour))
        return {
            do {
                let (granted, wait) = try await RateLimitFunctions.take(on: redis, bucket: bucket)
                if granted { return nil }
                return AppleCallRefusal(
                    VerificationFailure(.userAppleBudgetSpent, "this user's calls to Apple are spent for now (TOLLGATE_USER_APPLE_CALLS)"),
                    retryAfter: wait)
            } catch {
                return AppleCallRefusal(
                    VerificationFailure(.appleUnreachable, "the user's budget of calls to Apple could not be read: \(error)"),
                    retryAfter: nil)
            }
        }
    }
}
