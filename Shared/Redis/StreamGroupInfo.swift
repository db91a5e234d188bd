/// One consumer group as reported by `XINFO GROUPS`.
package struct StreamGroupInfo: Sendable {
    package var name: String
    package var consumers: Int
    package var pending: Int
    package var lastDeliveredID: String
    /// Redis 7: entries read by the group; nil when Redis cannot tell.
    package var entriesRead: Int?
    /// Redis 7: entries not yet delivered to the group; nil when Redis cannot tell.
    package var lag: Int?

    package init(name: String, consumers: Int, pending: Int, lastDeliveredID: String, entriesRead: Int?, lag: Int?) {
        self.name = name
        self.consumers = consumers
        self.pending = pending
        self.lastDeliveredID = lastDeliveredID
        self.entriesRead = entriesRead
        self.lag = lag
    }

    /// Parses one flat `[key, value, key, value, …]` array.
    init(reply: RedisReply) throws {
        guard let flat = reply.array, flat.count.isMultiple(of: 2) else {
            throw RedisError.protocolError("XINFO GROUPS item is not a flat key/value array")
        }
        var values: [String: RedisReply] = [:]
        for index in stride(from: 0, to: flat.count, by: 2) {
            if let key = flat[index].string { values[key] = flat[index + 1] }
        }
        guard let name = values["name"]?.string,
            let consumers = values["consumers"]?.int,
            let pending = values["pending"]?.int,
            let lastDelivered = values["last-delivered-id"]?.string
        else {
            throw RedisError.protocolError("XINFO GROUPS item lacks name, consumers, pending or last-delivered-id")
        }
        self.init(
            name: name,
            consumers: Int(consumers),
            pending: Int(pending),
            lastDeliveredID: lastDelivered,
            entriesRead: values["entries-read"]?.int.map { Int($0) },
            lag: values["lag"]?.int.map { Int($0) }
        )
    }
}
