import AppStore
import Ledger
import Logging
import Pipeline
import Redis

/// The latest receipt of a user with auto-renewable subscriptions, kept so that the sweeper can re-verify it
/// with `verifyReceipt` when that is the only source (no App Store Server API key): `tg:{u:<userId>}:receipt`
/// (hash `receipt`, `environment`, `at`), in the user's slot, written outside the ack function (one key; a
/// redelivered job writes it again). Apple's `latest_receipt` when it sent one, else the submitted receipt.
enum ReceiptReference {
    static func key(_ keys: Keys, user: String) -> String { "\(keys.projectPrefix):\(keys.userTag(user)):receipt" }

    /// Stores the receipt of a verified client job that holds an auto-renewable subscription.
    static func store(
        on redis: any RedisCommandExecutor, keys: Keys, job: Job, receipt: ValidatedReceipt, submitted: String,
        now: Int64, logger: Logger
    ) async {
        guard let user = job.userID, !user.isEmpty, !receipt.renewals.isEmpty else { return }
        let text = receipt.latestReceipt.flatMap { $0.isEmpty ? nil : $0 } ?? submitted
        do {
            _ = try await redis.send(
                RedisCommand(
                    "HSET", key: key(keys, user: user), "receipt", text, "environment", receipt.environment.rawValue, "at", now))
        } catch {
            logger.warning("Could not keep the receipt reference for the sweeper", metadata: ["error": "\(error)"])
        }
    }
}
