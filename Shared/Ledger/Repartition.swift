import Core
import Foundation
import Pipeline
package import Redis

/// Moves a single-primary deployment's data from one partition (layout 1) to N (layout 2), in place, before it is
/// imported into a Redis Cluster (`tollctl layout repartition`; Services/Tollctl/README.md has the steps).
///
/// It runs with the services stopped after they drained their work, and refuses otherwise: a job or event still
/// pending in `tg:{p0}:jobs`/`verified` would be read by nobody afterwards. Then, on the one primary (keys of any
/// slots may be renamed there):
/// 1. marks the layout record `migrating` (services refuse to start until the move is done);
/// 2. `RENAME`s every user key `tg:{u:<id>}:<rest>` to `tg:{<Pu>}:u:<id>:<rest>` and every purchase-chain key
///    `tg:{otx:<id>}:<rest>` to `tg:{<Po>}:otx:<id>:<rest>` — O(1) each, about ten keys per user;
/// 3. splits the sweep index `tg:{p0}:subs:due`/`ref` and the grants' due index `tg:{p0}:grants:due` into each
///    user's partition;
/// 4. records N partitions and clears the mark.
///
/// Steps 2 and 3 are done for every project whose keys Redis holds (docs/PROJECTS.md: `tg:<id>:{u:<id>}:…`,
/// `tg:<id>:{otx:<id>}:…` and the project's indexes, found by `SCAN MATCH tg:*:{*`), each with its own keys, so no
/// project's ledger is left behind in the old layout.
///
/// Each step can be run again: a run interrupted anywhere is finished by running it again. Left in `{p0}` on
/// purpose: the events stream (the app's backend finishes reading it, then reads each partition's), dead letters
/// and finished job statuses (job reads fall back to `{p0}` for ids without a partition), and the control keys.
package struct Repartition: Sendable {
    package struct Report: Sendable, Hashable, Codable {
        package var partitions: Int
        package var userKeys = 0
        package var chainKeys = 0
        package var sweepEntries = 0
        package var grantEntries = 0
        package var alreadyDone = false
        /// The projects besides `default` whose keys were moved.
        package var projects: [String] = []
    }

    let redis: any RedisCommandExecutor
    let source: Keys
    let target: Keys

    /// - Parameters:
    ///   - keys: the deployment's keys (their prefix); the layout is taken from `partitions`.
    package init(redis: any RedisCommandExecutor, prefix: String, partitions: Int) throws {
        self.redis = redis
        source = Keys(prefix: prefix)
        target = Keys(prefix: prefix, layout: try PartitionLayout(count: partitions))
    }

    package func run() async throws -> Report {
        var report = Report(partitions: target.layout.count)
        guard !target.layout.isSingle else { throw PipelineError.repartitionRefused("--partitions must be 2 or more") }
        let info = try await redis.send(RedisCommand(keyless: "INFO", "cluster")).string ?? ""
        guard !info.contains("cluster_enabled:1") else {
            throw PipelineError.repartitionRefused("this is a Redis Cluster node; run it on the single primary before importing")
        }
        let record = try await redis.hgetall(source.layoutRecord)
        let migrating = record["migrating"].flatMap { Int($0) }
        let recorded = record["partitions"].flatMap { Int($0) }
        if let migrating, migrating != target.layout.count {
            throw PipelineError.repartitionRefused("a repartition to \(migrating) is unfinished; finish it with --partitions \(migrating)")
        }
        if migrating == nil {
            if recorded == target.layout.count {
                report.alreadyDone = true
                return report
            }
            guard recorded == nil || recorded == 1 else {
                throw PipelineError.repartitionRefused("the data is laid out in \(recorded ?? 0) partitions, not 1")
            }
            try await refuseUnfinishedWork()
            _ = try await redis.send(RedisCommand("HSET", key: source.layoutRecord, "migrating", target.layout.count))
        }
        let others = try await otherProjects()
        report.projects = others.map(\.rawValue)
        for project in [ProjectID.default] + others {
            try await move(from: source.inProject(project), to: target.inProject(project), report: &report)
        }
        _ = try await redis.send(
            RedisCommand("HSET", key: source.layoutRecord, "partitions", target.layout.count, "version", target.layout.version))
        _ = try await redis.send(RedisCommand("HDEL", key: source.layoutRecord, "migrating"))
        return report
    }

    /// Moves one project's user and chain keys and splits its indexes.
    private func move(from source: Keys, to target: Keys, report: inout Report) async throws {
        var userKeys = 0
        var chainKeys = 0
        let userHead = "\(source.projectPrefix):{u:"
        try await redis.scanKeys(match: "\(userHead)*}:*") { found in
            for key in found {
                guard let (id, rest) = Self.split(key, head: userHead) else { continue }
                userKeys += try await rename(key, to: "\(target.projectPrefix):\(target.userTag(id)):\(rest)")
            }
        }
        let chainHead = "\(source.projectPrefix):{otx:"
        try await redis.scanKeys(match: "\(chainHead)*}:*") { found in
            for key in found {
                guard let (id, rest) = Self.split(key, head: chainHead) else { continue }
                chainKeys += try await rename(key, to: "\(target.projectPrefix):\(target.chainTag(id)):\(rest)")
            }
        }
        report.userKeys += userKeys
        report.chainKeys += chainKeys
        report.sweepEntries += try await splitSweepIndex(from: source, to: target)
        report.grantEntries += try await splitGrantsIndex(from: source, to: target)
    }

    /// The projects other than `default` that hold keys: `tg:<id>:{…` (every shared key is `tg:{…`).
    private func otherProjects() async throws -> [ProjectID] {
        var found = Set<ProjectID>()
        let head = "\(source.prefix):"
        try await redis.scanKeys(match: "\(head)*:{*") { keys in
            for key in keys where key.hasPrefix(head) {
                let tail = key.dropFirst(head.count)
                guard let end = tail.range(of: ":{"), let project = ProjectID(String(tail[..<end.lowerBound])) else { continue }
                found.insert(project)
            }
        }
        return found.sorted()
    }

    /// Refuses while the pipeline holds work the new layout's consumers would not read.
    private func refuseUnfinishedWork() async throws {
        for stream in [source.jobs(), source.verified()] {
            let retrying = try await redis.send(RedisCommand("ZCARD", key: stream.retry)).int ?? 0
            guard retrying == 0 else {
                throw PipelineError.repartitionRefused("\(stream.retry) holds \(retrying) entries waiting for a retry")
            }
            guard (try await redis.send(RedisCommand("EXISTS", key: stream.stream)).int ?? 0) > 0 else { continue }
            let length = try await redis.xlen(stream.stream)
            let last = try await redis.lastEntryID(of: stream.stream)
            for group in try await redis.xinfoGroups(stream.stream) {
                let undelivered = group.undelivered(streamLength: length, lastEntry: last)
                guard group.pending == 0, undelivered == 0 else {
                    throw PipelineError.repartitionRefused(
                        "\(stream.stream) group \(group.name) has \(group.pending) pending and \(undelivered) undelivered entries; "
                            + "drain the services first")
                }
            }
        }
    }

    /// `RENAME` unless the key is gone already (moved by an earlier run); 1 when it moved.
    private func rename(_ key: String, to newKey: String) async throws -> Int {
        do {
            _ = try await redis.send(RedisCommand("RENAME", arguments: [key, newKey], keysAt: [0, 1]))
            return 1
        } catch RedisError.server(let code, let message) where code == "ERR" && message.contains("no such key") {
            return 0
        }
    }

    /// Copies each sweep-index entry into its user's partition, then drops the old index.
    private func splitSweepIndex(from source: Keys, to target: Keys) async throws -> Int {
        let due = source.subscriptionsDue()
        let reference = source.subscriptionsDueReference()
        let flat = (try await redis.send(RedisCommand("ZRANGE", key: due, 0, -1, "WITHSCORES")).array ?? []).compactMap(\.string)
        var moved = 0
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            let member = flat[index]
            guard let parts = try? JSONDecoder().decode([String].self, from: Data(member.utf8)), parts.count == 3 else { continue }
            let partition = target.partition(ofUser: parts[2])
            _ = try await redis.send(RedisCommand("ZADD", key: target.subscriptionsDue(partition: partition), flat[index + 1], member))
            if let latest = try await redis.send(RedisCommand("HGET", key: reference, member)).string {
                _ = try await redis.send(RedisCommand("HSET", key: target.subscriptionsDueReference(partition: partition), member, latest))
            }
            moved += 1
        }
        _ = try await redis.send(RedisCommand("DEL", key: due))
        _ = try await redis.send(RedisCommand("DEL", key: reference))
        return moved
    }

    /// Moves each grant's due entry (member `["<userId>","<grantId>"]`) into its user's partition's index.
    private func splitGrantsIndex(from source: Keys, to target: Keys) async throws -> Int {
        let due = source.grantsDue()
        let flat = (try await redis.send(RedisCommand("ZRANGE", key: due, 0, -1, "WITHSCORES")).array ?? []).compactMap(\.string)
        var moved = 0
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            let member = flat[index]
            guard let parts = try? JSONDecoder().decode([String].self, from: Data(member.utf8)), parts.count == 2 else { continue }
            let destination = target.grantsDue(partition: target.partition(ofUser: parts[0]))
            guard destination != due else { continue }  // partition 0 may keep the tag {p0}
            _ = try await redis.send(RedisCommand("ZADD", key: destination, flat[index + 1], member))
            _ = try await redis.send(RedisCommand("ZREM", key: due, member))
            moved += 1
        }
        return moved
    }

    /// `tg:{u:42}:account` → ("42", "account").
    static func split(_ key: String, head: String) -> (String, String)? {
        guard key.hasPrefix(head), let close = key.range(of: "}:", range: key.index(key.startIndex, offsetBy: head.count)..<key.endIndex)
        else { return nil }
        let id = String(key[key.index(key.startIndex, offsetBy: head.count)..<close.lowerBound])
        let rest = String(key[close.upperBound...])
        guard !id.isEmpty, !rest.isEmpty else { return nil }
        return (id, rest)
    }
}
