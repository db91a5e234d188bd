import ArgumentParser
import Core
import Foundation
import Ledger
import Pipeline

/// `tollctl testers add|remove|list`: a project's testers (``Ledger/Testers``), the users whose sandbox side (App Review,
/// TestFlight) counts as production value under `TOLLGATE_SANDBOX_VALUE=testers` (docs/OPERATIONS.md). Each change
/// writes its event (`tester.added`, `tester.removed`) in the user's sequence.
struct TestersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "testers", abstract: "Users whose sandbox purchases count as production value (TestFlight, App Review).",
        subcommands: [TestersAddCommand.self, TestersRemoveCommand.self, TestersListCommand.self])

    static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

struct TestersAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Mark a user a tester (until a time, or with no end) and write tester.added.")

    @OptionGroup var target: UserChangeArguments

    @Option(help: "When the mark ends: an ISO 8601 time (2026-12-31T00:00:00Z). Default: no end.")
    var until: String?

    @Option(name: .customLong("for"), help: "How long the mark lasts (30d, 12h, 90m), instead of --until.")
    var duration: String?

    @Option(help: "Why (1–200 bytes), recorded on the mark and its event.")
    var reason: String?

    func validate() throws {
        if let reason, !(1...Testers.maxReasonBytes).contains(reason.utf8.count) {
            throw ValidationError("--reason must be 1–\(Testers.maxReasonBytes) bytes")
        }
        guard until == nil || duration == nil else { throw ValidationError("give --until or --for, not both") }
    }

    /// When the mark ends (ms), from `--until` or `--for`; nil for no end.
    func endMilliseconds(now: Int64) throws -> Int64? {
        let tenYears: Int64 = 3653 * 86_400_000
        var end: Int64?
        if let until {
            guard let milliseconds = UTCTime.milliseconds(iso8601: until) else {
                throw ToolError("invalid_until", "--until must be an ISO 8601 time such as 2026-12-31T00:00:00Z")
            }
            end = milliseconds
        } else if let duration {
            guard let length = EnvironmentReader.parseDuration(duration), length > .zero else {
                throw ToolError("invalid_until", "--for must be a duration such as 30d, 12h or 90m")
            }
            end = now + length.components.seconds * 1000 + length.components.attoseconds / 1_000_000_000_000_000
        }
        if let end {
            guard end > now else { throw ToolError("invalid_until", "the mark must end in the future") }
            guard end - now <= tenYears else { throw ToolError("invalid_until", "the mark may last at most 10 years") }
        }
        return end
    }

    func run() async throws {
        let project = try target.project.resolve()
        let now = TestersCommand.nowMilliseconds
        let end = try endMilliseconds(now: now)
        try await UserLedgerConnection.with { redis, allKeys in
            let keys = allKeys.inProject(project)
            switch try await Testers.add(user: target.userID, until: end, reason: reason, by: target.by, now: now, keys: keys, on: redis) {
            case .changed(let seq, let eventId):
                print("user \(target.userID): tester until \(end.map(EntitlementsView.iso8601) ?? "no end")  event=\(eventId) seq=\(seq)")
            case .unchanged, .notFound:
                print("user \(target.userID): already a tester until \(end.map(EntitlementsView.iso8601) ?? "no end"); nothing written")
            }
        }
    }
}

struct TestersRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a user's tester mark and write tester.removed.")

    @OptionGroup var target: UserChangeArguments

    func run() async throws {
        let project = try target.project.resolve()
        try await UserLedgerConnection.with { redis, allKeys in
            let keys = allKeys.inProject(project)
            let change = try await Testers.remove(
                user: target.userID, by: target.by, now: TestersCommand.nowMilliseconds, keys: keys, on: redis)
            guard case .changed(let seq, let eventId) = change else {
                throw ToolError("not_found", "user \(target.userID) is no tester of project \(project)")
            }
            print("user \(target.userID): tester mark removed  event=\(eventId) seq=\(seq)")
        }
    }
}

struct TestersListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List a project's testers (marks past their end as expired).")

    @OptionGroup var project: ProjectOption

    @Flag(help: "One JSON object per line.")
    var json = false

    func run() async throws {
        let project = try self.project.resolve()
        try await UserLedgerConnection.with { redis, allKeys in
            let testers = try await Testers.list(keys: allKeys.inProject(project), on: redis)
            let now = TestersCommand.nowMilliseconds
            for tester in testers {
                if json {
                    var writer = JSONWriter()
                    writer.beginObject()
                    tester.writeMembers(&writer, now: now)
                    writer.endObject()
                    print(String(decoding: writer.bytes, as: UTF8.self))
                } else {
                    print(
                        "\(tester.user)  until=\(tester.until.map(EntitlementsView.iso8601) ?? "-")  "
                            + "\(tester.isActive(at: now) ? "active" : "expired")  by=\(tester.by)"
                            + (tester.reason.map { "  reason=\($0)" } ?? ""))
                }
            }
            if !json { print("testers=\(testers.count)") }
        }
    }
}
