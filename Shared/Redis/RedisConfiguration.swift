/// Where and how to connect to Redis.
///
/// Build it in code or from a URL with ``init(url:)``. `description` never shows the password.
public struct RedisConfiguration: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// ACL user name (`redis://user:pass@host`); nil uses the default user.
    public var username: String?
    /// Password sent with AUTH after every (re)connect.
    public var password: String?
    /// Database selected with SELECT after every (re)connect.
    public var database: Int
    /// How long establishing the TCP connection may take.
    public var connectTimeout: Duration
    /// Socket read/write timeout for each command (overridable per call for blocking commands).
    public var commandTimeout: Duration
    /// Sent with CLIENT SETNAME on every (re)connect.
    public var clientName: String?

    public init(
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

    public var description: String {
        var text = "redis://"
        if username != nil || password != nil {
            text += (username ?? "") + (password == nil ? "" : ":***") + "@"
        }
        text += host.contains(":") ? "[\(host)]" : host
        return text + ":\(port)/\(database)"
    }
}
