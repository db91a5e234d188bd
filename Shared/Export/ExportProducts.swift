package import Ledger
import Logging
package import PostgresNIO

/// The `products` table: the catalog with what the revenue views need (docs/EXPORT.md), rewritten whole in one
/// transaction at each exporter start, so it always matches the catalog the ledger credits by.
package enum ExportProducts {
    package static func replace(with catalog: Catalog, on client: PostgresClient, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            // Replicas starting together replace it one after the other (without the lock both delete, then the
            // second insert fails on the first's rows).
            try await connection.perform("LOCK TABLE products IN EXCLUSIVE MODE", logger: logger)
            try await connection.perform("DELETE FROM products", logger: logger)
            for product in catalog.products {
                let rates = (product.commission ?? .standard).rates
                let afterYear = product.type == .autoRenewable ? rates.afterYear : rates.first
                try await connection.perform(
                    """
                    INSERT INTO products (product_id, type, entitlement, coins, period, commission_rate,
                        commission_rate_after_year)
                    VALUES (\(product.productId), \(product.type.rawValue), \(product.entitlement),
                        \(product.coins.map(Int64.init)), \(product.period), \(String(rates.first))::numeric,
                        \(String(afterYear))::numeric)
                    """, logger: logger)
            }
        }
    }
}
