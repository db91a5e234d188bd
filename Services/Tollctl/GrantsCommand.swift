import ArgumentParser
import Core
import Foundation
import Ledger
import Pipeline

/// `tollctl grants USERID [--json]`: the user's labelled grants (``Ledger/LedgerGrants``), oldest first: one line
/// each (`grantId`, `entitlement=` and `until=` or `coins=`, `by=`, `at=`, `reason=`, `expired` when its `until`
/// passed but the fulfiller's sweep has not removed it yet), or with `--json` `{"userId", "coinsGranted",
/// "grants": [{grantId, entitlement | coins, until, reason, by, at}]}`. Revoked and expired grants are in the
/// user's events (docs/EVENTS.md, "Grants").
struct GrantsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grants", abstract: "List a user's labelled grants (entitlements and coins given by a service key).")

    @Argument(help: "The user id.")
    var userID: String

    @OptionGroup var project: ProjectOption

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        guard UserID.isValid(userID) else { throw ValidationError("USERID is not a valid user id") }
    }

    func run() async throws {
        let project = try self.project.resolve()
        try await UserLedgerConnection.with { redis, allKeys in
            let keys = allKeys.inProject(project)
            let grants = try await LedgerGrants.list(user: userID, keys: keys, on: redis)
            let account = try await UserLedgerConnection.hash(redis, keys.account(user: userID))
            let coinsGranted = account[EntitlementsView.Field.coinsGranted].flatMap { Int64($0) } ?? 0
            if json {
                print(Self.json(user: userID, coinsGranted: coinsGranted, grants: grants))
            } else {
                print(
                    Self.lines(
                        user: userID, coinsGranted: coinsGranted, grants: grants,
                        now: Int64(Date().timeIntervalSince1970 * 1000)))
            }
        }
    }

    static func json(user: String, coinsGranted: Int64, grants: [LedgerGrants.Grant]) -> String {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.member("userId", user)
        writer.member("coinsGranted", coinsGranted)
        writer.array("grants", grants) { grant, writer in
            writer.beginObject()
            grant.writeMembers(&writer)
            writer.endObject()
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func lines(user: String, coinsGranted: Int64, grants: [LedgerGrants.Grant], now: Int64) -> String {
        var lines = ["user \(user)  grants=\(grants.count)  coinsGranted=\(coinsGranted)"]
        for grant in grants {
            var parts = [grant.grantId]
            if let name = grant.entitlement { parts.append("entitlement=\(name)") }
            if let coins = grant.coins { parts.append("coins=\(coins)") }
            if let until = grant.until { parts.append("until=\(EntitlementsView.iso8601(until))") }
            parts += ["by=\(grant.by)", "at=\(EntitlementsView.iso8601(grant.at))", "reason=\(grant.reason)"]
            if !grant.isActive(at: now) { parts.append("expired") }
            lines.append("  " + parts.joined(separator: "  "))
        }
        return lines.joined(separator: "\n")
    }
}
