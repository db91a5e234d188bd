package import Foundation

/// A Redis dump an earlier build wrote, for the upgrade tests: `Tests/Fixtures/upgrade/<name>/` holds `dump.rdb`, the
/// `fixture.json` manifest of what it holds (written with it by scripts/make-upgrade-fixture) and a README on how it was
/// made. Start a server on a copy with ``RedisServer/start(loading:)``.
package struct UpgradeFixture: Sendable, CustomStringConvertible {
    /// What the earlier build served for each user when the dump was written (scripts/upgrade-fixture-scenario).
    package struct Manifest: Sendable, Decodable {
        package struct User: Sendable, Decodable {
            package struct Entitlement: Sendable, Decodable {
                package var state: String
                package var expiresAt: String?
            }

            package var coins: Int
            package var entitlements: [String: Entitlement]
            /// The user's transaction ids, in purchase order.
            package var transactions: [String]
        }

        package struct Purchase: Sendable, Decodable {
            package var user: String
            package var transactionId: String
        }

        package struct Subscription: Sendable, Decodable {
            package var user: String
            package var originalTransactionId: String
            package var orderNo: String
        }

        /// The commit of the build that wrote it.
        package var commit: String
        package var users: [String: User]
        /// A purchase Apple refunded (a coin pack).
        package var refunded: Purchase
        package var subscription: Subscription
        package var nonConsumable: Purchase
    }

    /// `Tests/Fixtures/upgrade`.
    package static let directory = Vectors.repositoryRoot.appendingPathComponent("Tests/Fixtures/upgrade", isDirectory: true)

    /// Every fixture's name (its folder), oldest first by name.
    package static var names: [String] {
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return folders.filter { FileManager.default.fileExists(atPath: directory.appendingPathComponent("\($0)/dump.rdb").path) }.sorted()
    }

    package let name: String
    package let manifest: Manifest

    package var folder: URL { Self.directory.appendingPathComponent(name, isDirectory: true) }
    /// The RDB file; never written: a server loads a copy.
    package var dump: URL { folder.appendingPathComponent("dump.rdb") }
    package var description: String { name }

    package init(_ name: String) throws {
        self.name = name
        manifest = try JSONDecoder().decode(
            Manifest.self, from: Data(contentsOf: Self.directory.appendingPathComponent("\(name)/fixture.json")))
    }
}
