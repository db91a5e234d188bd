import ArgumentParser
import Foundation
import Ledger
import Pipeline
import Redis

/// `tollctl user USERID`: the user's coins and entitlements (as `GET /v1/users/{id}/entitlements` shows
/// them, grants merged in; `tollctl grants` lists the grants), ledger counters (refund shortfall, fraud signals) and transactions, newest last.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Show a user's coins, entitlements and transactions.")

    @Argument(help: "The user id.")
    var userID: String

    func validate() throws {
        guard !userID.isEmpty, !userID.contains("}") else { throw ValidationError("USERID must be non-empty, without '}'") }
    }

    func run() async throws {
        try await UserLedgerConnection.with { redis, keys in
            let view = EntitlementsView(
                hash: try await UserLedgerConnection.hash(redis, keys.account(user: userID)),
                grants: try await LedgerGrants.list(user: userID, keys: keys, on: redis),
                nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print("user \(userID)")
            print("entitlements \(String(decoding: try encoder.encode(view), as: UTF8.self))")
            let meta = try await UserLedgerConnection.hash(redis, keys.ledgerMeta(user: userID))
            let counters = meta.filter { $0.key == "shortfall" || $0.key.hasPrefix("fraud:") }.sorted { $0.key < $1.key }
            if !counters.isEmpty { print("counters " + counters.map { "\($0.key)=\($0.value)" }.joined(separator: "  ")) }
            let ids = try await redis.send(RedisCommand("ZRANGE", keys.transactions(user: userID), 0, -1)).array ?? []
            print("transactions \(ids.count)")
            for id in ids.compactMap(\.string) {
                let hash = try await UserLedgerConnection.hash(redis, keys.transaction(user: userID, transactionId: id))
                guard let record = TransactionRecord(hash: hash) else { continue }
                print(Self.line(record))
            }
        }
    }

    static func line(_ record: TransactionRecord) -> String {
        let formatter = ISO8601DateFormatter()
        func date(_ ms: Int64) -> String { formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)) }
        var parts = [
            record.transactionId, "original=\(record.originalTransactionId)", "product=\(record.productId)",
            "type=\(record.type)", "state=\(record.state)", "coins=\(record.coins)", "debited=\(record.debited)",
            "environment=\(record.environment)", "purchased=\(date(record.purchaseDate))",
        ]
        if record.shortfall > 0 { parts.append("shortfall=\(record.shortfall)") }
        if let type = record.revocationType { parts.append("revocationType=\(type)") }
        if let share = record.revocationPercentage { parts.append("revocationPercentage=\(share)") }
        if let expires = record.expiresDate { parts.append("expires=\(date(expires))") }
        if let offer = record.offer { parts.append("offer=\(offer)  offerSigned=\(record.offerSigned == true)") }
        if record.withheld { parts.append("withheld=true") }
        return "  " + parts.joined(separator: "  ")
    }
}
