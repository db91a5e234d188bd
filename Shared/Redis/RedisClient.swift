import Logging
package import ServiceLifecycle

/// A connection of its own for calls that hold it (a blocking `XREADGROUP`): nothing else queues behind it.
/// Close it when done.
package protocol RedisDedicatedConnection: RedisCommandExecutor {
    /// Closes the connection; a call in flight fails with ``RedisError/unknownOutcome(_:)``.
    func close()
}

extension RedisConnection: RedisDedicatedConnection {}

/// A process's long-lived client of its Redis deployment: a ``RedisPool`` on one server or a
/// ``RedisClusterClient`` on a Redis Cluster. It runs commands, opens dedicated connections for blocking reads
/// that follow their key's slot, and runs as a `Service` that closes it on shutdown.
package protocol RedisClient: RedisCommandExecutor, Service {
    /// A dedicated connection for blocking reads of `key` (e.g. one stream partition), named `clientName`: on one
    /// server a plain connection; on a cluster a ``ClusterReader`` that follows the primary of `key`'s slot.
    func dedicatedConnection(forKey key: String, clientName: String) -> any RedisDedicatedConnection

    /// Refuses further calls and closes every connection.
    func close()
}

extension RedisPool: RedisClient {
    package func dedicatedConnection(forKey key: String, clientName: String) -> any RedisDedicatedConnection {
        var configuration = configuration
        configuration.clientName = clientName
        return RedisConnection(configuration: configuration, logger: logger)
    }
}

extension RedisClusterClient: RedisClient {
    package func dedicatedConnection(forKey key: String, clientName: String) -> any RedisDedicatedConnection {
        ClusterReader(client: self, key: key, clientName: clientName, logger: logger)
    }
}
