import Ledger
import PostgresNIO

/// One row's columns with their values bound, built once and used by both the write (``ExportWriter``) and the
/// audit (``ExportAudit``), so that what is compared is exactly what is written.
package struct ColumnValues: Sendable {
    package private(set) var names: [String] = []
    /// Each column's SQL expression over its bind (`$3`, `to_timestamp($4::bigint / 1000.0)`, `$5::jsonb`).
    package private(set) var expressions: [String] = []
    package private(set) var bindings = PostgresBindings()

    /// Adds `name` with `value` (nil: SQL NULL); `wrap` is the expression with `$` where the bind goes.
    mutating func add<Value: PostgresDynamicTypeEncodable>(_ name: String, _ value: Value?, as wrap: String = "$") {
        bindings.append(value)
        names.append(name)
        expressions.append(wrap.replacingOccurrences(of: "$", with: "$\(bindings.count)"))
    }

    /// `INSERT … ON CONFLICT (key) DO UPDATE` of every column but `key`, only `where` the stored row is older.
    func upsert(into table: String, key: String, where condition: String) -> PostgresQuery {
        let updates = names.filter { $0 != key }.map { "\($0) = EXCLUDED.\($0)" }
        return PostgresQuery(
            unsafeSQL: """
                INSERT INTO \(table) (\(names.joined(separator: ", ")), updated_at)
                VALUES (\(expressions.joined(separator: ", ")), now())
                ON CONFLICT (\(key)) DO UPDATE SET \(updates.joined(separator: ", ")), updated_at = EXCLUDED.updated_at
                WHERE \(condition)
                """, binds: bindings)
    }

    /// The names of the columns whose stored value differs from this one's (`IS DISTINCT FROM`), of the row whose
    /// `key` is this one's; no row when there is none.
    func differences(in table: String, key: String, ignoring: Set<String> = []) -> PostgresQuery {
        let checks = zip(names, expressions).filter { !ignoring.contains($0.0) }.map { name, expression in
            "CASE WHEN \(name) IS DISTINCT FROM \(expression) THEN '\(name)' END"
        }
        let keyExpression = zip(names, expressions).first { $0.0 == key }?.1 ?? "NULL"
        return PostgresQuery(
            unsafeSQL: """
                SELECT array_to_string(array_remove(ARRAY[\(checks.joined(separator: ", "))]::text[], NULL), ',')
                FROM \(table) WHERE \(key) = \(keyExpression)
                """, binds: bindings)
    }
}

extension UserRow {
    var columns: ColumnValues {
        var row = ColumnValues()
        row.add("user_id", userId)
        row.add("coins", coins)
        row.add("coins_granted", coinsGranted)
        row.add("coins_spent", coinsSpent)
        row.add("entitlements", entitlements, as: "$::jsonb")
        row.add("last_seq", seq)
        return row
    }
}

extension TransactionRecord {
    /// The `transactions` row of this record, owned by `user`, as of the user's event `seq`.
    func columns(user: String, seq: Int64) -> ColumnValues {
        let time = "to_timestamp($::bigint / 1000.0)"
        var row = ColumnValues()
        row.add("transaction_id", transactionId)
        row.add("original_transaction_id", originalTransactionId)
        row.add("user_id", user)
        row.add("product_id", productId)
        row.add("product_type", type)
        row.add("environment", environment.lowercased())
        row.add("state", state)
        row.add("quantity", Int32(clamping: quantity))
        row.add("coins", coins)
        row.add("debited", debited)
        row.add("shortfall", shortfall)
        row.add("purchased_at", purchaseDate, as: time)
        row.add("expires_at", expiresDate, as: time)
        row.add("revoked_at", revokedAt, as: time)
        row.add("revocation_type", revocationType)
        row.add("revocation_percentage", revocationPercentage.map(Int32.init(clamping:)))
        row.add("ownership_type", ownershipType)
        row.add("withheld", withheld)
        row.add("offer", offer)
        row.add("offer_signed", offerSigned)
        row.add("price", price)
        row.add("currency", currency)
        row.add("storefront", storefront)
        row.add("offer_type", offerType.map(Int32.init(clamping:)))
        row.add("offer_identifier", offerIdentifier)
        row.add("last_seq", seq)
        return row
    }
}
