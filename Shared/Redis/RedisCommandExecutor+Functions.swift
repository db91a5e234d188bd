extension RedisCommandExecutor {
    /// `FUNCTION LOAD REPLACE <source>`; returns the library name.
    package func functionLoad(_ source: String) async throws -> String {
        let reply = try await send(RedisCommand("FUNCTION", arguments: ["LOAD", "REPLACE", source], keysAt: []))
        guard let name = reply.string else {
            throw RedisError.protocolError("FUNCTION LOAD returned \(reply)")
        }
        return name
    }

    /// `FCALL name numkeys keys… args…`.
    package func fcall(
        _ function: String,
        keys: [any RedisArgumentConvertible],
        arguments: [any RedisArgumentConvertible]
    ) async throws -> RedisReply {
        try await send(RedisCommand("FCALL", arguments: [function, keys.count] + keys + arguments, keysAt: 2..<(2 + keys.count)))
    }
}
