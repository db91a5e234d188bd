import Ledger
import Logging
import PostgresNIO

/// Writes the export's rows into PostgreSQL (docs/EXPORT.md). Every statement is idempotent: an event row is keyed
/// by its id; a record's row (`users`, `transactions`, `grants`) is replaced only by one of a later `seq` of the
/// same user, so a write repeated after a crash, or an older event's write arriving after a newer one's on another
/// replica, changes nothing.
package struct ExportWriter: Sendable {
    package let client: PostgresClient
    let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Writes one event with what it changed (the snapshot read after it), in one transaction.
    package func write(_ event: ExportEvent, snapshot: ExportSnapshot?) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await Self.insert(event, on: connection, logger: logger)
            if let snapshot {
                try await Self.upsert(snapshot.user, on: connection, logger: logger)
                for record in snapshot.transactions {
                    try await Self.upsert(record, user: snapshot.userId, seq: snapshot.seq, on: connection, logger: logger)
                }
            }
            if event.changesEntitlement, let user = event.userId, let entitlement = event.entitlement, let state = event.state {
                try await connection.query(
                    """
                    INSERT INTO subscriptions (event_id, user_id, seq, at, type, environment, original_transaction_id,
                        transaction_id, product_id, entitlement, state, expires_at, auto_renew)
                    VALUES (\(event.id), \(user), \(event.seq), \(event.at)::timestamptz, \(event.type), \(event.environment),
                        \(event.originalTransactionId), \(event.transactionId), \(event.productId), \(entitlement), \(state),
                        \(event.expiresAt)::timestamptz, \(event.autoRenew))
                    ON CONFLICT (event_id) DO NOTHING
                    """, logger: logger)
            }
            if let grantId = event.grantId, let user = event.userId {
                try await Self.upsertGrant(event, grantId: grantId, user: user, on: connection, logger: logger)
            }
            if event.type == "coins.spent", let user = event.userId, let amount = event.amount, let balance = event.balance,
                let key = event.idempotencyKey
            {
                try await connection.query(
                    """
                    INSERT INTO spends (event_id, user_id, seq, at, amount, balance, idempotency_key, by_key, reason)
                    VALUES (\(event.id), \(user), \(event.seq), \(event.at)::timestamptz, \(amount), \(balance), \(key),
                        \(event.by), \(event.reason))
                    ON CONFLICT (event_id) DO NOTHING
                    """, logger: logger)
            }
        }
    }

    /// Writes one user's snapshot (`tollctl export`): the user's row and the records of the snapshot's page.
    package func write(_ snapshot: ExportSnapshot) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await Self.upsert(snapshot.user, on: connection, logger: logger)
            for record in snapshot.transactions {
                try await Self.upsert(record, user: snapshot.userId, seq: snapshot.seq, on: connection, logger: logger)
            }
        }
    }

    /// Writes events alone (`tollctl export`: what a user's own log still holds); each at most once.
    package func write(events: [ExportEvent]) async throws {
        guard !events.isEmpty else { return }
        try await client.withTransaction(logger: logger) { connection in
            for event in events { try await Self.insert(event, on: connection, logger: logger) }
        }
    }

    static func insert(_ e: ExportEvent, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO events (id, type, user_id, seq, seq_scope, at, environment, product_id, transaction_id,
                original_transaction_id, quantity, price, currency, storefront, ownership_type, offer_type, offer_identifier,
                purchased_at, delta, balance, shortfall, entitlement, state, expires_at, auto_renew, revocation_type,
                revocation_percentage, reason, job_id, grant_id, amount, idempotency_key, by_key, notification_type, subtype,
                body)
            VALUES (\(e.id), \(e.type), \(e.userId), \(e.seq), \(e.seqScope), \(e.at)::timestamptz, \(e.environment),
                \(e.productId), \(e.transactionId), \(e.originalTransactionId), \(e.quantity.map(Int32.init(clamping:))),
                \(e.price), \(e.currency), \(e.storefront), \(e.ownershipType), \(e.offerType.map(Int32.init(clamping:))),
                \(e.offerIdentifier), \(e.purchasedAt)::timestamptz, \(e.delta), \(e.balance), \(e.shortfall),
                \(e.entitlement), \(e.state), \(e.expiresAt)::timestamptz, \(e.autoRenew), \(e.revocationType),
                \(e.revocationPercentage.map(Int32.init(clamping:))), \(e.reason), \(e.jobId), \(e.grantId), \(e.amount),
                \(e.idempotencyKey), \(e.by), \(e.notificationType), \(e.subtype), \(e.body)::jsonb)
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
    }

    static func upsert(_ user: UserRow, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            user.columns.upsert(into: "users", key: "user_id", where: "users.last_seq < EXCLUDED.last_seq"), logger: logger)
    }

    /// A record's row; a record already exported for another user is left as it is (the first owner keeps a
    /// transaction, as the ledger's binding does), and the audit names the difference.
    static func upsert(
        _ record: TransactionRecord, user: String, seq: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            record.columns(user: user, seq: seq).upsert(
                into: "transactions", key: "transaction_id",
                where: "transactions.user_id = EXCLUDED.user_id AND transactions.last_seq < EXCLUDED.last_seq"),
            logger: logger)
    }

    /// A grant's row from its event: the status of the latest `seq` (created, revoked or expired), and when it was
    /// created from its `grant.created` event whichever order the two arrive in.
    static func upsertGrant(
        _ e: ExportEvent, grantId: String, user: String, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let status: String
        switch e.type {
        case "grant.revoked": status = "revoked"
        case "grant.expired": status = "expired"
        default: status = "active"
        }
        let created: String? = status == "active" ? e.at : nil
        let ended: String? = status == "active" ? nil : e.at
        try await connection.query(
            """
            INSERT INTO grants (grant_id, user_id, entitlement, coins, until, reason, by_key, status, revoked_by,
                created_at, ended_at, last_seq)
            VALUES (\(grantId), \(user), \(e.entitlement), \(e.coins), \(e.until)::timestamptz, \(e.reason), \(e.by),
                \(status), \(e.revokedBy), \(created)::timestamptz, \(ended)::timestamptz, \(e.seq))
            ON CONFLICT (grant_id) DO UPDATE SET
                created_at = COALESCE(grants.created_at, EXCLUDED.created_at),
                status = CASE WHEN grants.last_seq < EXCLUDED.last_seq THEN EXCLUDED.status ELSE grants.status END,
                revoked_by = CASE WHEN grants.last_seq < EXCLUDED.last_seq THEN EXCLUDED.revoked_by ELSE grants.revoked_by END,
                ended_at = CASE WHEN grants.last_seq < EXCLUDED.last_seq THEN EXCLUDED.ended_at ELSE grants.ended_at END,
                last_seq = GREATEST(grants.last_seq, EXCLUDED.last_seq)
            """, logger: logger)
    }
}
