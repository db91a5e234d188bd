extension RedisCommandExecutor {
    /// `HGETALL key` as a dictionary (empty when the key does not exist); a field whose value is not text
    /// maps to "".
    package func hgetall(_ key: String) async throws -> [String: String] {
        let flat = try await send(RedisCommand("HGETALL", key: key)).array ?? []
        var result: [String: String] = [:]
        var index = 0
        while index + 1 < flat.count {
            if let name = flat[index].string { result[name] = flat[index + 1].string ?? "" }
            index += 2
        }
        return result
    }
}
