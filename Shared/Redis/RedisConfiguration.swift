/// Where and how to connect to Redis.
///
/// Build it in code or from a URL with ``init(url:)``. `description` never shows the password.
package struct RedisConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// One `host:port` a client can connect to.
    package struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        package var host: String
        package var port: Int

        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        package var description: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
    }

    package var host: String
    package var port: Int
    /// Further seeds after `host:port` (`redis://a:7000,b:7001`), for a Redis Cluster client; a single server
    /// uses `host:port` only.
    package var additionalSeeds: [Endpoint] = []
    /// ACL user name (`redis://user:pass@host`); nil uses the default user.
    package var username: String?
    /// Password sent with AUTH after every (re)connect.
    package var password: String?
    /// Database selected with SELECT after every (re)connect.
    package var database: Int
    /// How long establishing the TCP connection may take.
    package var connectTimeout: Duration
    /// Socket read/write timeout for each command (overridable per call for blocking commands).
    package var commandTimeout: Duration
    /// Sent with CLIENT SETNAME on every (re)connect.
    package var clientName: String?

    package init(
        host: String = "127.0.0.1",
        port: Int = 6379,
        username: String? = nil,
        password: String? = nil,
        database: Int = 0,
        connectTimeout: Duration = .seconds(2),
        commandTimeout: Duration = .seconds(5),
        clientName: String? = nil
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.clientName = clientName
    }

    /// `host:port` then ``additionalSeeds``: every address a cluster client may ask for the slot map.
    package var seeds: [Endpoint] { [Endpoint(host: host, port: port)] + additionalSeeds }

    /// This configuration pointed at one node (no further seeds): how a cluster client connects to each node.
    package func node(_ endpoint: Endpoint) -> RedisConfiguration {
        var copy = self
        copy.host = endpoint.host
        copy.port = endpoint.port
        copy.additionalSeeds = []
        return copy
    }

    package var description: String {
        var text = "redis://"
        if username != nil || password != nil {
            text += (username ?? "") + (password == nil ? "" : ":***") + "@"
        }
        text += seeds.map(\.description).joined(separator: ",")
        return text + "/\(database)"
    }
}
