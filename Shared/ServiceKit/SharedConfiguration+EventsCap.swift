import Core
package import Logging
import Pipeline
package import Redis

extension SharedConfiguration {
    /// The setting ``checkEventsCap(maxBytes:redis:logger:)`` checks: one events stream's cap, in MB.
    package static let eventsMaxVariable = "TOLLGATE_EVENTS_MAX_MB"

    /// Checks at start that the events streams' cap fits in Redis's memory: on each primary, `maxBytes` (one events
    /// stream's cap, `TOLLGATE_EVENTS_MAX_MB`) times the partitions whose events stream it holds must stay below its
    /// `maxmemory`, or the streams alone (held by an endpoint or a reader that does not acknowledge) could fill it
    /// and Redis, which evicts nothing, refuse the ledger's writes. Where `CONFIG GET maxmemory` answers, a cap that
    /// cannot fit throws a ``Core/ConfigurationError`` naming `TOLLGATE_EVENTS_MAX_MB`; where `CONFIG` is refused (a
    /// managed Redis), `INFO memory`'s `maxmemory` is read and a misfit is a warning. No limit (`maxmemory` 0) always
    /// fits; no cap (`maxBytes` nil) on a server with a limit is a warning.
    package func checkEventsCap(maxBytes: Int?, redis: any RedisCommandExecutor, logger: Logger) async throws {
        let streams = keys.partitions.map { keys.events(partition: $0).stream }
        for server in try await redis.servers(holding: streams) {
            guard let found = await Self.maxmemory(of: server.redis), found.bytes > 0 else { continue }
            let (limit, fromConfig) = (found.bytes, found.fromConfig)
            let megabytes = { (bytes: Int) in bytes / 1_048_576 }
            guard let maxBytes else {
                logger.warning(
                    "The events streams have no cap (TOLLGATE_EVENTS_MAX_MB=0) on a Redis with a memory limit",
                    metadata: ["redis": "\(server.name)", "maxmemory.mb": "\(megabytes(limit))", "partitions": "\(server.keys)"])
                continue
            }
            let needed = maxBytes.multipliedReportingOverflow(by: server.keys)
            guard needed.overflow || needed.partialValue >= limit else { continue }
            let problem =
                "(\(megabytes(maxBytes)) MB per partition × \(server.keys) partitions on \(server.name)) does not fit in its "
                + "maxmemory (\(megabytes(limit)) MB): lower it, or raise maxmemory"
            if fromConfig { throw ConfigurationError(variable: Self.eventsMaxVariable, problem: problem) }
            logger.warning("\(Self.eventsMaxVariable) \(problem)", metadata: ["source": "INFO memory (CONFIG refused)"])
        }
    }

    /// `maxmemory` in bytes, and whether `CONFIG GET` said so (else `INFO memory`); nil when neither answers.
    private static func maxmemory(of redis: any RedisCommandExecutor) async -> (bytes: Int, fromConfig: Bool)? {
        if let reply = try? await redis.send(RedisCommand(keyless: "CONFIG", "GET", "maxmemory")),
            let value = reply.array?.last?.string.flatMap({ Int($0) })
        {
            return (value, true)
        }
        guard let info = try? await redis.send(RedisCommand(keyless: "INFO", "memory")).string else { return nil }
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("maxmemory:") {
            if let value = Int(String(line.dropFirst("maxmemory:".count).filter { !$0.isWhitespace })) { return (value, false) }
        }
        return nil
    }
}
