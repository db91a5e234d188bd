import AppStore
import Core
import Foundation
import Ledger
import Logging
import Pipeline
import Redis

/// The subscription half of a reconcile pass: finds auto-renewable subscriptions whose period (or grace
/// period) ended more than ``ReconcilerConfiguration/sweepGrace`` ago with no renewal, expiry or billing-retry
/// news — the fulfiller keeps them in the sweep index of the user's partition, `tg:{Pu}:subs:due` (see
/// `Keys+LedgerRecords`; every project has its own, docs/PROJECTS.md), and each pass reads every project's partitions' — and asks Apple with Get All Subscription Statuses (under the fleet-wide `subscriptionStatus` bucket).
///
/// Apple's answer is verified like any signed data (chain, OIDs, bundle, environment) and, when it differs
/// from the ledger (a new transaction, another `expiresDate`, a refund, other renewal state), handed to the
/// fulfiller as a verified `transaction` event with source `reconciler`; the ledger applies it with its usual
/// rules (a transaction once; renewal state only when its `signedDate` is not older than what it holds), and
/// its index update moves the subscription's next look to the new period's end (until the fulfiller has
/// applied it, the look is pushed ``settleDelay`` on, so a lagging fulfiller does not get the same correction
/// every pass). When nothing differs, the next look is pushed ``ReconcilerConfiguration/sweepRecheck`` later.
struct SubscriptionSweeper: Sendable {
    let context: ReconcileContext

    /// One due subscription, from the index.
    struct Due: Sendable {
        var member: String
        var environment: AppStoreEnvironment
        var entitlement: String
        var user: String
        var dueAt: Int64
        /// The partition whose index holds it.
        var partition = Partition.first
        /// The project whose index holds it: its ledger is read with that project's keys, and a correction carries it.
        var project = ProjectID.default
    }

    /// How long after a correction the subscription is not looked at again (unless the ledger, applying it,
    /// moves it later): the recheck time, at most 10 minutes, at least one pass interval.
    var settleDelay: Duration {
        let settings = context.configuration.reconcile
        return min(settings.sweepRecheck, max(settings.interval, .seconds(600)))
    }

    /// Looks up at most ``ReconcilerConfiguration/sweepBatch`` due subscriptions, from every project's index in every
    /// partition: the indexes are read in turn, starting at one that moves on every second, so that indexes with many
    /// due subscriptions cannot keep the others from ever being read.
    func run(report: inout ReconcileReport) async throws {
        let projects = context.configuration.projects?.map(\.id) ?? [.default]
        let indexes = projects.flatMap { project in context.keys.partitions.map { (project, $0) } }
        let start = indexes.count > 1 ? Int((context.clock.nowMilliseconds() / 1000) % Int64(indexes.count)) : 0
        var left = context.configuration.reconcile.sweepBatch
        for offset in 0..<indexes.count where left > 0 {
            let (project, partition) = indexes[(start + offset) % indexes.count]
            left -= try await run(project: project, partition: partition, limit: left, report: &report)
        }
    }

    /// Looks up at most `limit` due subscriptions of one project's index in one partition; returns how many it read.
    private func run(project: ProjectID, partition: Partition, limit: Int, report: inout ReconcileReport) async throws -> Int {
        let keys = context.keys.inProject(project)
        let cutoff = context.clock.nowMilliseconds() - context.configuration.reconcile.sweepGrace.milliseconds
        let reply = try await context.redis.send(
            RedisCommand(
                "ZRANGEBYSCORE", key: keys.subscriptionsDue(partition: partition), "-inf", cutoff, "WITHSCORES", "LIMIT", 0, limit))
        let flat = reply.array ?? []
        var index = 0
        while index + 1 < flat.count {
            defer { index += 2 }
            guard let member = flat[index].string, let score = flat[index + 1].string.flatMap(Double.init) else { continue }
            guard var due = Self.parse(member: member, score: score) else {
                context.logger.warning("Unreadable sweep index member", metadata: ["member": "\(member.prefix(200))"])
                try await postpone(
                    Due(
                        member: member, environment: .production, entitlement: "", user: "", dueAt: 0, partition: partition,
                        project: project))
                continue
            }
            due.partition = partition
            due.project = project
            report.due += 1
            // Data this deployment no longer accepts: look again after the recheck time (settings may change back).
            guard context.configuration.accepts(due.environment) else {
                try await postpone(due)
                continue
            }
            // Apple unavailable or rate limited ends the sweep (and the pass); the rest waits for the next one.
            try await check(due, report: &report)
        }
        return flat.count / 2
    }

    /// Reads an index member `["<environment>","<entitlement>","<userId>"]`.
    static func parse(member: String, score: Double) -> Due? {
        guard let parts = try? JSONDecoder().decode([String].self, from: Data(member.utf8)), parts.count == 3,
            !parts[1].isEmpty, !parts[2].isEmpty
        else { return nil }
        let environment = AppStoreEnvironment(rawValue: parts[0])
        guard environment == .production || environment == .sandbox else { return nil }
        return Due(member: member, environment: environment, entitlement: parts[1], user: parts[2], dueAt: Int64(score))
    }

    /// Pushes the next look at `due` to now + `delay` (default: the recheck time), never earlier than it already
    /// is, never re-adding it (`ZADD XX GT`).
    func postpone(_ due: Due, by delay: Duration? = nil) async throws {
        guard !context.dryRun else { return }
        let next = context.clock.nowMilliseconds() + (delay ?? context.configuration.reconcile.sweepRecheck).milliseconds
        _ = try await context.redis.send(
            RedisCommand(
                "ZADD", key: context.keys.inProject(due.project).subscriptionsDue(partition: due.partition), "XX", "GT", next, due.member))
    }
}
