import Redis
import Testing

@Suite("RedisConfiguration(url:)")
struct RedisConfigurationTests {
    @Test func parsesHostPortAndDatabase() throws {
        let configuration = try RedisConfiguration(url: "redis://cache.internal:6380/3")
        #expect(configuration.host == "cache.internal")
        #expect(configuration.port == 6380)
        #expect(configuration.database == 3)
        #expect(configuration.username == nil)
        #expect(configuration.password == nil)
    }

    @Test func appliesDefaults() throws {
        let configuration = try RedisConfiguration(url: "redis://10.0.0.5")
        #expect(configuration.host == "10.0.0.5")
        #expect(configuration.port == 6379)
        #expect(configuration.database == 0)
        #expect(try RedisConfiguration(url: "redis://h/").database == 0)
    }

    @Test func parsesPasswordOnly() throws {
        let configuration = try RedisConfiguration(url: "redis://:s3cret@localhost:7000")
        #expect(configuration.username == nil)
        #expect(configuration.password == "s3cret")
        #expect(configuration.port == 7000)
    }

    @Test func parsesUserAndPercentEncodedPassword() throws {
        let configuration = try RedisConfiguration(url: "redis://app:p%40ss%3Aw0rd@localhost/1")
        #expect(configuration.username == "app")
        #expect(configuration.password == "p@ss:w0rd")
        #expect(configuration.database == 1)
    }

    @Test func parsesBracketedIPv6() throws {
        let configuration = try RedisConfiguration(url: "redis://[::1]:6390")
        #expect(configuration.host == "::1")
        #expect(configuration.port == 6390)
    }

    @Test func descriptionHidesPassword() throws {
        let configuration = try RedisConfiguration(url: "redis://app:topsecret@localhost")
        #expect(!configuration.description.contains("topsecret"))
        #expect(configuration.description.contains("localhost:6379"))
    }

    @Test(arguments: [
        ("http://localhost:6379", "scheme"),
        ("localhost:6379", "redis://"),
        ("rediss://localhost:6379", "TLS"),
        ("redis://localhost:abc", "port"),
        ("redis://localhost:0", "port"),
        ("redis://localhost:70000", "port"),
        ("redis://localhost:", "port"),
        ("redis://localhost/x", "database"),
        ("redis://localhost/-1", "database"),
        ("redis://", "host is empty"),
        ("redis://:pw@:6379", "host is empty"),
        ("redis://a:b:c", "more than one ':'"),
        ("redis://[::1", "']'"),
        ("redis://localhost?db=2", "query"),
        ("redis://justuser@localhost", "credentials"),
        ("redis://:p%zz@localhost", "percent"),
    ])
    func rejectsMalformedURL(url: String, mentions: String) {
        do {
            _ = try RedisConfiguration(url: url)
            Issue.record("accepted \(url)")
        } catch let error as RedisError {
            guard case .invalidURL(let message) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(message.contains(mentions), "\(url): \(message)")
            #expect(error.code == "invalid_url")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func errorMessageDoesNotLeakPassword() {
        #expect(throws: RedisError.self) { try RedisConfiguration(url: "ftp://u:hunter2@host") }
        do {
            _ = try RedisConfiguration(url: "ftp://u:hunter2@host")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
    }
}
