import Redis

/// Builds the `KEYS` and `ARGV` of one pipeline function call, encoding writes as the library expects:
/// a count, then per write `XADD keyIndex n f v…`, `HSET keyIndex ttl n f v…`, `STATUS keyIndex ttl jobId channel
/// n f v… m f…`, `PUBLISH channel message`, `HINCRBY keyIndex field delta` or `EXPIRE keyIndex seconds`.
/// Keys are referenced by their 1-based index in `KEYS`, and each distinct key is passed once.
struct FunctionCall {
    private(set) var keys: [String]
    private(set) var arguments: [[UInt8]]
    private let fixedKeys: Int

    init(keys: [String], arguments: [String]) {
        self.keys = keys
        self.fixedKeys = keys.count
        self.arguments = arguments.map { Array($0.utf8) }
    }

    mutating func append(_ writes: [PipelineWrite]) {
        arguments.append(Array(String(writes.count).utf8))
        for write in writes {
            switch write {
            case .xadd(let stream, let fields):
                add("XADD")
                add(String(keyIndex(stream)))
                add(fields)
            case .hset(let key, let fields, let expireSeconds):
                add("HSET")
                add(String(keyIndex(key)))
                add(String(max(0, expireSeconds ?? 0)))
                add(fields)
            case .status(let key, let jobID, let fields, let clear, let expireSeconds, let channel):
                add("STATUS")
                add(String(keyIndex(key)))
                add(String(max(1, expireSeconds)))
                add(jobID)
                add(channel)
                add(fields.map { ($0.0, Array($0.1.utf8)) })
                add(String(clear.count))
                for name in clear { add(name) }
            case .publish(let channel, let message):
                add("PUBLISH")
                add(channel)
                arguments.append(message)
            case .hincrby(let key, let field, let delta):
                add("HINCRBY")
                add(String(keyIndex(key)))
                add(field)
                add(String(delta))
            case .shortenExpiry(let key, let seconds):
                add("EXPIRE")
                add(String(keyIndex(key)))
                add(String(max(1, seconds)))
            }
        }
    }

    /// Runs one of ``PipelineFunctions/library``'s functions and reads its 1/0 answer.
    func run(_ function: String, on redis: any RedisCommandExecutor) async throws -> Bool {
        let reply = try await PipelineFunctions.library.call(function, on: redis, keys: keys, arguments: arguments)
        switch reply.int {
        case 1: return true
        case 0: return false
        default: throw PipelineError.unexpectedReply("\(function) returned \(reply)")
        }
    }

    private mutating func add(_ text: String) {
        arguments.append(Array(text.utf8))
    }

    private mutating func add(_ fields: [(String, [UInt8])]) {
        add(String(fields.count))
        for (name, value) in fields {
            add(name)
            arguments.append(value)
        }
    }

    /// The 1-based `KEYS` index of a write target; write targets never alias the fixed keys' slots.
    private mutating func keyIndex(_ key: String) -> Int {
        if let index = keys[fixedKeys...].firstIndex(of: key) { return index + 1 }
        keys.append(key)
        return keys.count
    }
}
