import Ledger
import Logging
import Pipeline
package import PostgresNIO

/// Writes the export's rows into PostgreSQL (docs/EXPORT.md): everything one event changes in **one statement**
/// (``SQLStatement``: writable CTEs, atomic, one round trip). Every part is idempotent: an event row is keyed by its
/// id; a record's row (`users`, `transactions`, `grants`) is replaced only by one of a later `seq` of the same user,
/// so a write repeated after a crash, or an older event's write arriving after a newer one's on another replica,
/// changes nothing.
package struct ExportWriter: Sendable {
    package let client: PostgresClient
    let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Writes one event with what it changed (the snapshot read after it).
    package func write(_ event: ExportEvent, snapshot: ExportSnapshot?) async throws {
        var statement = SQLStatement()
        Self.add(event, snapshot: snapshot, into: &statement)
        try await client.perform(statement.query, logger: logger)
    }

    /// Writes several events (or snapshots alone) in one statement: ``ExportBatcher``'s group commit. The items must
    /// touch distinct rows (``ExportBatcher/Item/rows``): one statement cannot write a row twice.
    package func write(batch: [(event: ExportEvent?, snapshot: ExportSnapshot?)]) async throws {
        var statement = SQLStatement()
        for item in batch {
            if let event = item.event {
                Self.add(event, snapshot: item.snapshot, into: &statement)
            } else if let snapshot = item.snapshot {
                Self.upsert(snapshot, into: &statement)
            }
        }
        guard !statement.isEmpty else { return }
        try await client.perform(statement.query, logger: logger)
    }

    /// Everything `event` changes, as parts of `statement`.
    static func add(_ event: ExportEvent, snapshot: ExportSnapshot?, into statement: inout SQLStatement) {
        Self.insert(event, into: &statement)
        if let snapshot { Self.upsert(snapshot, into: &statement) }
        if event.changesEntitlement, let user = event.userId, let entitlement = event.entitlement, let state = event.state {
            var s = statement
            s.add(
                """
                INSERT INTO subscriptions (event_id, user_id, seq, at, type, environment, original_transaction_id,
                    transaction_id, product_id, entitlement, state, expires_at, auto_renew)
                VALUES (\(s.bind(event.id)), \(s.bind(user)), \(s.bind(event.seq)), \(s.bind(event.at))::timestamptz,
                    \(s.bind(event.type)), \(s.bind(event.environment)), \(s.bind(event.originalTransactionId)),
                    \(s.bind(event.transactionId)), \(s.bind(event.productId)), \(s.bind(entitlement)), \(s.bind(state)),
                    \(s.bind(event.expiresAt))::timestamptz, \(s.bind(event.autoRenew)))
                ON CONFLICT (event_id) DO NOTHING
                """)
            statement = s
        }
        if let grantId = event.grantId, let user = event.userId {
            Self.upsertGrant(event, grantId: grantId, user: user, into: &statement)
        }
        if event.type == "sandbox.cleared", let user = event.userId {
            // An operator cleared the user's sandbox side (`tollctl sandbox clear`): its records are gone from the
            // ledger, so their rows go too — those written before the clear (a lower seq of that side), never a
            // sandbox purchase after it. No revenue figure counts sandbox rows.
            var s = statement
            s.add(
                """
                DELETE FROM transactions
                WHERE user_id = \(s.bind(user)) AND environment <> 'production' AND last_seq < \(s.bind(event.seq))
                """)
            statement = s
        }
        if event.type == "coins.spent", let user = event.userId, let amount = event.amount, let balance = event.balance,
            let key = event.idempotencyKey
        {
            var s = statement
            s.add(
                """
                INSERT INTO spends (event_id, user_id, seq, at, amount, balance, idempotency_key, by_key, reason, side)
                VALUES (\(s.bind(event.id)), \(s.bind(user)), \(s.bind(event.seq)), \(s.bind(event.at))::timestamptz,
                    \(s.bind(amount)), \(s.bind(balance)), \(s.bind(key)), \(s.bind(event.by)), \(s.bind(event.reason)),
                    \(s.bind(event.side.rawValue)))
                ON CONFLICT (event_id) DO NOTHING
                """)
            statement = s
        }
    }

    /// Writes one user's snapshot (`tollctl export`): the user's row and the records of the snapshot's page.
    package func write(_ snapshot: ExportSnapshot) async throws {
        var statement = SQLStatement()
        Self.upsert(snapshot, into: &statement)
        try await client.perform(statement.query, logger: logger)
    }

    static func insert(_ e: ExportEvent, into statement: inout SQLStatement) {
        var s = statement
        let values = [
            s.bind(e.id), s.bind(e.type), s.bind(e.userId), s.bind(e.seq), s.bind(e.seqScope), s.bind(e.at) + "::timestamptz",
            s.bind(e.environment), s.bind(e.productId), s.bind(e.transactionId), s.bind(e.originalTransactionId),
            s.bind(e.quantity.map(Int32.init(clamping:))), s.bind(e.price), s.bind(e.currency), s.bind(e.storefront),
            s.bind(e.ownershipType), s.bind(e.offerType.map(Int32.init(clamping:))), s.bind(e.offerIdentifier),
            s.bind(e.purchasedAt) + "::timestamptz", s.bind(e.delta), s.bind(e.balance), s.bind(e.shortfall),
            s.bind(e.entitlement), s.bind(e.state), s.bind(e.expiresAt) + "::timestamptz", s.bind(e.autoRenew),
            s.bind(e.revocationType), s.bind(e.revocationPercentage.map(Int32.init(clamping:))), s.bind(e.reason),
            s.bind(e.jobId), s.bind(e.grantId), s.bind(e.amount), s.bind(e.idempotencyKey), s.bind(e.by),
            s.bind(e.notificationType), s.bind(e.subtype), s.bindJSON(e.body), s.bind(e.side.rawValue),
        ]
        s.add(
            """
            INSERT INTO events (id, type, user_id, seq, seq_scope, at, environment, product_id, transaction_id,
                original_transaction_id, quantity, price, currency, storefront, ownership_type, offer_type, offer_identifier,
                purchased_at, delta, balance, shortfall, entitlement, state, expires_at, auto_renew, revocation_type,
                revocation_percentage, reason, job_id, grant_id, amount, idempotency_key, by_key, notification_type, subtype,
                body, side)
            VALUES (\(values.joined(separator: ", ")))
            ON CONFLICT (id) DO NOTHING
            """)
        statement = s
    }

    /// The user's row and each record's row of `snapshot`. A record already exported for another user is left as it
    /// is (the first owner keeps a transaction, as the ledger's binding does), and the audit names the difference.
    static func upsert(_ snapshot: ExportSnapshot, into statement: inout SQLStatement) {
        let user = snapshot.user.columns(into: &statement)
        let table = snapshot.usersTable
        statement.add(user.upsert(into: table, key: "user_id", where: "\(table).last_seq < EXCLUDED.last_seq"))
        for record in snapshot.transactions {
            let row = record.columns(user: snapshot.userId, seq: snapshot.seq, into: &statement)
            statement.add(
                row.upsert(
                    into: "transactions", key: "transaction_id",
                    where: "transactions.user_id = EXCLUDED.user_id AND transactions.last_seq < EXCLUDED.last_seq"))
        }
    }

    /// A grant's row from its event: the status of the latest `seq` (created, revoked or expired), and when it was
    /// created from its `grant.created` event whichever order the two arrive in.
    static func upsertGrant(_ e: ExportEvent, grantId: String, user: String, into statement: inout SQLStatement) {
        let status: String
        switch e.type {
        case "grant.revoked": status = "revoked"
        case "grant.expired": status = "expired"
        default: status = "active"
        }
        let created: String? = status == "active" ? e.at : nil
        let ended: String? = status == "active" ? nil : e.at
        var s = statement
        s.add(
            """
            INSERT INTO grants (grant_id, user_id, entitlement, coins, until, reason, by_key, status, revoked_by,
                created_at, ended_at, last_seq)
            VALUES (\(s.bind(grantId)), \(s.bind(user)), \(s.bind(e.entitlement)), \(s.bind(e.coins)),
                \(s.bind(e.until))::timestamptz, \(s.bind(e.reason)), \(s.bind(e.by)), \(s.bind(status)),
                \(s.bind(e.revokedBy)), \(s.bind(created))::timestamptz, \(s.bind(ended))::timestamptz, \(s.bind(e.seq)))
            ON CONFLICT (grant_id) DO UPDATE SET
                created_at = COALESCE(grants.created_at, EXCLUDED.created_at),
                status = CASE WHEN grants.last_seq < EXCLUDED.last_seq THEN EXCLUDED.status ELSE grants.status END,
                revoked_by = CASE WHEN grants.last_seq < EXCLUDED.last_seq THEN EXCLUDED.revoked_by ELSE grants.revoked_by END,
                ended_at = CASE WHEN grants.last_seq < EXCLUDED.last_seq THEN EXCLUDED.ended_at ELSE grants.ended_at END,
                last_seq = GREATEST(grants.last_seq, EXCLUDED.last_seq)
            """)
        statement = s
    }
}
