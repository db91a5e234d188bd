package import Pipeline
package import Redis

/// A user's own `appAccountToken`: one lower-case UUID per user, for purchases that carry no order's token (bought
/// outside the app, an offer code redeemed in the App Store) and that an operator ties to the user with Apple's Set
/// App Account Token (`tollctl apple set-account-token`).
///
/// It lives in the same mapping as an order's token, `tg:{aat:<token>}:order` (``Keys/appAccountToken(_:)``), with
/// `user` and no `order.no`, so the fulfiller's owner resolution and the ledger function find the user exactly as
/// they find an order's; `tg:{u:<userId>}:aat` (``Keys/accountToken(user:)``) remembers it, so that a user keeps one
/// token. Neither key expires. Each step writes one key and is idempotent (no two-slot Function): the mapping is
/// written before the user's key names it, so an interrupted creation leaves at most an unused mapping.
package enum AccountToken {
    /// Who `token` maps to: the user and, for an order's token, the order; nil when it maps to no one.
    package static func owner(
        of token: String, keys: Keys, on redis: any RedisCommandExecutor
    ) async throws -> (user: String, orderNo: String?)? {
        let reply = try await redis.send(
            RedisCommand("HMGET", key: keys.appAccountToken(token), Order.TokenField.user, Order.TokenField.orderNo))
        guard let values = reply.array, let user = values.first?.string, !user.isEmpty else { return nil }
        return (user, values.count > 1 ? values[1].string : nil)
    }

    /// The user's token, created (and mapped to the user) on first use; `created` says which.
    /// - Throws: ``LedgerError/unexpectedReply(_:)`` when the user's token maps to someone else (the keys were edited
    ///   by hand); Redis errors.
    package static func getOrCreate(
        user: String, keys: Keys, on redis: any RedisCommandExecutor
    ) async throws -> (token: String, created: Bool) {
        let userKey = keys.accountToken(user: user)
        if let existing = try await redis.send(RedisCommand("GET", key: userKey)).string {
            try await map(existing, to: user, keys: keys, on: redis)
            return (existing, false)
        }
        let fresh = Order.newAppAccountToken()
        try await map(fresh, to: user, keys: keys, on: redis)
        let claimed = try await redis.send(RedisCommand("SET", key: userKey, fresh, "NX"))
        if !claimed.isNull { return (fresh, true) }
        // Another run created the user's token first: keep that one, drop the unused mapping.
        _ = try await redis.send(RedisCommand("DEL", key: keys.appAccountToken(fresh)))
        guard let winner = try await redis.send(RedisCommand("GET", key: userKey)).string else {
            throw LedgerError.unexpectedReply("\(userKey) vanished while it was being created")
        }
        try await map(winner, to: user, keys: keys, on: redis)
        return (winner, false)
    }

    /// Maps `token` to `user` for good (unless it already maps to someone, which must be `user`).
    private static func map(_ token: String, to user: String, keys: Keys, on redis: any RedisCommandExecutor) async throws {
        let key = keys.appAccountToken(token)
        _ = try await redis.send(RedisCommand("HSETNX", key: key, Order.TokenField.user, user))
        _ = try await redis.send(RedisCommand("PERSIST", key: key))
        guard let owner = try await owner(of: token, keys: keys, on: redis), UserID.same(owner.user, user) else {
            throw LedgerError.unexpectedReply("the account token of user \(user) maps to another user in \(key)")
        }
    }
}
