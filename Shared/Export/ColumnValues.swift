import Foundation
import Ledger
package import PostgresNIO

/// One SQL statement being built: its binds, numbered as they are added, and its parts. Several parts become one
/// statement of writable CTEs (`WITH w0 AS (INSERT …), w1 AS (INSERT …) SELECT 1`): PostgreSQL runs it as one atomic
/// unit in one round trip, where a transaction of separate statements took one round trip each plus `BEGIN` and
/// `COMMIT` (`scripts/bench-export`). Each part writes another row.
package struct SQLStatement: Sendable {
    package private(set) var bindings = PostgresBindings()
    package private(set) var parts: [String] = []

    /// Binds `value` (nil: SQL NULL) and answers its placeholder, `$n`. Text is bound as PostgreSQL can store it
    /// (``PostgresText/text(_:)``: a NUL as the six characters `\u0000`), in every write and in the audit alike.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value?) -> String {
        if let text = value as? String {
            bindings.append(PostgresText.text(text))
        } else {
            bindings.append(value)
        }
        return "$\(bindings.count)"
    }

    /// Binds the JSON text `json` as `jsonb` (``PostgresText/json(_:)``: an escaped NUL, which `jsonb` refuses,
    /// as the string ``PostgresText/text(_:)`` would store) and answers `$n::jsonb`.
    mutating func bindJSON(_ json: String?) -> String {
        bindings.append(json.map(PostgresText.json))
        return "$\(bindings.count)::jsonb"
    }

    mutating func add(_ part: String) { parts.append(part) }

    package var isEmpty: Bool { parts.isEmpty }

    /// The statement: its one part, or every part as a writable CTE.
    package var query: PostgresQuery {
        let sql =
            parts.count == 1
            ? parts[0]
            : "WITH " + parts.enumerated().map { "w\($0.offset) AS (\($0.element))" }.joined(separator: ",\n") + "\nSELECT 1"
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }
}

/// One row's columns, their values bound into a ``SQLStatement``, built once and used by both the write
/// (``ExportWriter``) and the audit (``ExportAudit``), so that what is compared is exactly what is written.
package struct ColumnValues {
    package private(set) var names: [String] = []
    /// Each column's SQL expression over its bind (`$3`, `to_timestamp($4::bigint / 1000.0)`, `$5::jsonb`).
    package private(set) var expressions: [String] = []

    /// Adds `name` with `value` bound into `statement`; `wrap` is the expression with `$` where the bind goes.
    mutating func add<Value: PostgresDynamicTypeEncodable>(
        _ name: String, _ value: Value?, as wrap: String = "$", into statement: inout SQLStatement
    ) {
        names.append(name)
        expressions.append(wrap.replacingOccurrences(of: "$", with: statement.bind(value)))
    }

    /// Adds `name` with the JSON text `json` bound as `jsonb` (``SQLStatement/bindJSON(_:)``).
    mutating func addJSON(_ name: String, _ json: String?, into statement: inout SQLStatement) {
        names.append(name)
        expressions.append(statement.bindJSON(json))
    }

    /// `INSERT … ON CONFLICT (key) DO UPDATE` of every column but `key`, only `where` the stored row is older.
    func upsert(into table: String, key: String, where condition: String) -> String {
        let updates = names.filter { $0 != key }.map { "\($0) = EXCLUDED.\($0)" }
        return """
            INSERT INTO \(table) (\(names.joined(separator: ", ")), updated_at)
            VALUES (\(expressions.joined(separator: ", ")), now())
            ON CONFLICT (\(key)) DO UPDATE SET \(updates.joined(separator: ", ")), updated_at = EXCLUDED.updated_at
            WHERE \(condition)
            """
    }

    /// The names of the columns whose stored value differs from this one's (`IS DISTINCT FROM`), of the row whose
    /// `key` is this one's; no row when there is none.
    func differences(in table: String, key: String, ignoring: Set<String> = []) -> String {
        let checks = zip(names, expressions).filter { !ignoring.contains($0.0) }.map { name, expression in
            "CASE WHEN \(name) IS DISTINCT FROM \(expression) THEN '\(name)' END"
        }
        let keyExpression = zip(names, expressions).first { $0.0 == key }?.1 ?? "NULL"
        return """
            SELECT array_to_string(array_remove(ARRAY[\(checks.joined(separator: ", "))]::text[], NULL), ',')
            FROM \(table) WHERE \(key) = \(keyExpression)
            """
    }
}

extension UserRow {
    func columns(into statement: inout SQLStatement) -> ColumnValues {
        var row = ColumnValues()
        row.add("user_id", userId, into: &statement)
        row.add("coins", coins, into: &statement)
        row.add("coins_granted", coinsGranted, into: &statement)
        row.add("coins_spent", coinsSpent, into: &statement)
        row.addJSON("entitlements", entitlements, into: &statement)
        row.add("last_seq", seq, into: &statement)
        return row
    }
}

extension TransactionRecord {
    /// The `transactions` row of this record, owned by `user`, as of the user's event `seq`.
    func columns(user: String, seq: Int64, into s: inout SQLStatement) -> ColumnValues {
        let time = "to_timestamp($::bigint / 1000.0)"
        var row = ColumnValues()
        row.add("transaction_id", transactionId, into: &s)
        row.add("original_transaction_id", originalTransactionId, into: &s)
        row.add("user_id", user, into: &s)
        row.add("product_id", productId, into: &s)
        row.add("product_type", type, into: &s)
        row.add("environment", environment.lowercased(), into: &s)
        row.add("state", state, into: &s)
        row.add("quantity", Int32(clamping: quantity), into: &s)
        row.add("coins", coins, into: &s)
        row.add("debited", debited, into: &s)
        row.add("shortfall", shortfall, into: &s)
        row.add("purchased_at", purchaseDate, as: time, into: &s)
        row.add("expires_at", expiresDate, as: time, into: &s)
        row.add("revoked_at", revokedAt, as: time, into: &s)
        row.add("revocation_type", revocationType, into: &s)
        row.add("revocation_percentage", revocationPercentage.map(Int32.init(clamping:)), into: &s)
        row.add("ownership_type", ownershipType, into: &s)
        row.add("withheld", withheld, into: &s)
        row.add("offer", offer, into: &s)
        row.add("offer_signed", offerSigned, into: &s)
        row.add("price", price, into: &s)
        row.add("currency", currency, into: &s)
        row.add("storefront", storefront, into: &s)
        row.add("offer_type", offerType.map(Int32.init(clamping:)), into: &s)
        row.add("offer_identifier", offerIdentifier, into: &s)
        row.add("last_seq", seq, into: &s)
        return row
    }
}
