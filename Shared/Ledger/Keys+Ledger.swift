package import Pipeline

/// The ledger's Redis keys: the contract between ingest (which creates orders and reads accounts) and the
/// fulfiller (which pays orders and writes accounts).
///
/// Every key of one user carries the user's hash tag `{u:<userId>}`, so that an atomic step over one user's
/// ledger touches one Redis Cluster slot. An `appAccountToken` maps back to its order through a key tagged by
/// the token itself, because the fulfiller may learn the token (from Apple) before it knows the user.
///
/// | key | type | written by | fields |
/// |---|---|---|---|
/// | `tg:{u:<userId>}:order:<orderNo>` | hash | ingest (create), fulfiller (pay) | see ``Order/Field`` |
/// | `tg:{u:<userId>}:orders` | zset | ingest | member `orderNo`, score = created at (ms) |
/// | `tg:{aat:<appAccountToken>}:order` | hash | ingest, tollctl | `user`, `order.no` (token lower-case UUID; a user's own token, ``AccountToken``, has no `order.no`) |
/// | `tg:{u:<userId>}:aat` | string | tollctl | the user's own `appAccountToken` (``AccountToken``) |
/// | `tg:{u:<userId>}:account` | hash | fulfiller | see ``EntitlementsView/Field`` |
/// | `tg:{u:<userId>}:consent` | hash | ingest | `consented` (`1`/`0`), `at` (ms) |
/// | `tg:{u:<userId>}:offer:<offerId>` | zset | ingest | promotional offer signatures: member `<orderNo>/<nonce>`, score = signed at (ms) |
/// | `tg:{u:<userId>}:grants` | hash | ingest (grant, revoke), fulfiller (expiry) | grantId → JSON (``LedgerGrants/Grant``) |
/// | `tg:{u:<userId>}:grant-key:<key>` | string | ingest | a grant's `idempotencyKey`: the grant's JSON, kept 7 days |
/// | `tg:{u:<userId>}:grants:revoked` | zset | ingest (revoke) | member grantId of a revoked grant with an `until`, score = revoked at (ms); kept 7 days |
/// | `tg:{p0}:grants:due` | zset | ingest, fulfiller | member `["<userId>","<grantId>"]` (JSON), score = the grant's `until` (ms) |
/// | `tg:{u:<userId>}:spend-by:<keyName>:<idempotencyKey>` | hash | ingest (`ledger_v9_spend`) | `digest` (of amount and reason), `answer` (the spend's outcome JSON); kept 7 days (``CoinSpend``) |
/// | `tg:{u:<userId>}:spend:<idempotencyKey>` | hash | the previous release (read only now) | the same, per user only: read as a fallback until its last record expires |
/// | `tg:{u:<userId>}:tester` | hash | ingest, tollctl (`ledger_v9_tester_add`, `_remove`) | `at` (ms), `by`, `until` (ms; absent: no end), `reason` (``Testers``) |
/// | `tg:{p0}:testers` | zset | ingest, tollctl | member the user id, score = the mark's `until` (ms) or `+inf` (``Testers``) |
///
/// Unpaid orders and their token mappings expire; paid orders are kept, so that a purchase notified days later still
/// finds its order. A user's offer signatures are kept one offer window (``PromotionalOffer``) after the last, at
/// most the newest 100 per offer.
extension Keys {
    /// An order of a user: `tg:{u:<userId>}:order:<orderNo>` (hash, fields in ``Order/Field``).
    package func order(user userID: String, orderNo: String) -> String {
        "\(projectPrefix):\(userTag(userID)):order:\(orderNo)"
    }

    /// The index of a user's orders: `tg:{u:<userId>}:orders` (zset of order numbers scored by creation ms).
    package func orders(user userID: String) -> String {
        "\(projectPrefix):\(userTag(userID)):orders"
    }

    /// A user's unpaid orders: `tg:{u:<userId>}:orders:pending` (zset of order numbers scored by when each
    /// expires, ms). Capped per user by ingest; the fulfiller removes an order once paid.
    package func pendingOrders(user userID: String) -> String {
        "\(projectPrefix):\(userTag(userID)):orders:pending"
    }

    /// Where an `appAccountToken` leads: `tg:{aat:<token>}:order` (hash: `user`, `order.no`). The token is the
    /// lower-case UUID string; look it up lower-cased, as StoreKit may report it in either case.
    package func appAccountToken(_ token: String) -> String {
        "\(projectPrefix):{aat:\(token.lowercased())}:order"
    }

    /// The user's own `appAccountToken` (``AccountToken``): `tg:{u:<userId>}:aat` (string, lower-case UUID).
    package func accountToken(user userID: String) -> String {
        "\(projectPrefix):\(userTag(userID)):aat"
    }

    /// A user's balances and entitlements: `tg:{u:<userId>}:account` (hash, fields in
    /// ``EntitlementsView/Field``).
    package func account(user userID: String) -> String {
        "\(sidedUser(userID)):account"
    }

    /// The promotional offer signatures ingest handed a user for one offer: `tg:{u:<userId>}:offer:<offerId>` (zset,
    /// member `<orderNo>/<nonce>`, score = signed at ms). Counted against the offer's `perUser` limit; signatures
    /// older than its window are dropped, the newest 100 kept, and the key expires a window after the last one.
    package func offerSignatures(user userID: String, offerId: String) -> String {
        "\(projectPrefix):\(userTag(userID)):offer:\(offerId)"
    }

    /// A spend of the user's coins by one service key, by its idempotency key:
    /// `tg:{u:<userId>}:spend-by:<keyName>:<idempotencyKey>` (hash: `digest` of the amount and reason, `answer` the
    /// outcome JSON), kept ``CoinSpend/retentionSeconds``. The key's name (`by`: `[A-Za-z0-9._-]`, no `:`; a rotation
    /// keeps it) is part of it, so that two keys' same idempotency key are two spends (issue 42, item 12); the
    /// `spend-by:` segment keeps it apart from every ``legacyCoinSpend(user:idempotencyKey:)`` (whose key may hold `:`).
    package func coinSpend(user userID: String, by name: String, idempotencyKey: String) -> String {
        "\(projectPrefix):\(userTag(userID)):spend-by:\(name):\(idempotencyKey)"
    }

    /// The previous release's spend record, per user only: `tg:{u:<userId>}:spend:<idempotencyKey>` (the same hash).
    /// Spends read it when the key's own record is absent, so that a retry of a spend made before the upgrade replays
    /// instead of spending again; nothing writes it now. It can go in the release after this one (its records live
    /// ``CoinSpend/retentionSeconds``, 7 days).
    package func legacyCoinSpend(user userID: String, idempotencyKey: String) -> String {
        "\(projectPrefix):\(userTag(userID)):spend:\(idempotencyKey)"
    }

    /// Whether the user consented to Tollgate sharing consumption data with Apple: `tg:{u:<userId>}:consent`
    /// (hash: `consented` `1` or `0`, `at` ms, `by` the service key's name), written by ingest (`PUT /v1/users/{userId}/consent`) for the
    /// app's backend, read by the verifier before it answers a `CONSUMPTION_REQUEST`.
    package func consent(user userID: String) -> String {
        "\(projectPrefix):\(userTag(userID)):consent"
    }

    /// A user's labelled grants: `tg:{u:<userId>}:grants` (hash: grantId → the grant's JSON, ``LedgerGrants/Grant``:
    /// `{"grantId", "entitlement" | "coins", "until", "reason", "by", "at"}`, times in ms). Revoked and expired grants
    /// are removed; their history is in the user's events (docs/EVENTS.md, "Grants"). Grants are the primary side's:
    /// the sandbox side's key (``LedgerSide``) is never written, so that side reads none.
    package func grants(user userID: String) -> String {
        "\(sidedUser(userID)):grants"
    }

    /// A user's recently revoked grants: `tg:{u:<userId>}:grants:revoked` (zset: member the grantId of a revoked grant
    /// that had an `until`, score = revoked at, ms), kept as long as an idempotency record
    /// (``LedgerGrants/idempotencyKeySeconds``), so that a replay after the grant's `until` answers `revoked`, not
    /// `expired` (issue 42, item 9).
    package func revokedGrants(user userID: String) -> String {
        "\(sidedUser(userID)):grants:revoked"
    }

    /// A user's tester mark (``Testers``): `tg:{u:<userId>}:tester` (hash: `at` ms, `by`, `until` ms when it ends,
    /// `reason`), in the user's slot so that a spend reads it in its own call. One per user and project, whatever the
    /// side.
    package func tester(user userID: String) -> String {
        "\(projectPrefix):\(userTag(userID)):tester"
    }

    /// The testers of a partition's users: `tg:{p0}:testers` (zset, member the user id, score = the mark's `until` ms or
    /// `+inf`), in the partition of the users it lists (the slot of their marks with several partitions).
    package func testers(partition: Partition = .first) -> String { projectPartitionKey(partition, "testers") }

    /// A grant request's `idempotencyKey`: `tg:{u:<userId>}:grant-key:<key>` (string: the grant's JSON), kept 7 days.
    package func grantIdempotency(user userID: String, key: String) -> String {
        "\(projectPrefix):\(userTag(userID)):grant-key:\(key)"
    }

    /// The grants of a partition's users by when they end: `tg:{p0}:grants:due` (zset, member `["<userId>",
    /// "<grantId>"]`, score = `until` ms), in the partition of the users it lists (so a user's grants hash and the
    /// index are in one slot on a Redis Cluster, as the subscriptions' `subs:due`), swept by the fulfiller.
    package func grantsDue(partition: Partition = .first) -> String { projectPartitionKey(partition, "grants", "due") }
}
