import Core
import Foundation
import Testing
import Verification
import Webhooks

/// Issue 42 item 11: "loopback" was a `127.` prefix, so `http://127.attacker.example/` passed as a webhook URL and as
/// Apple's API URL in production. Loopback is exactly `localhost`, a literal address in 127.0.0.0/8, or `::1`.
@Suite struct LoopbackTests {
    @Test(arguments: ["localhost", "LocalHost", "127.0.0.1", "127.255.255.254", "127.1.2.3", "::1", "[::1]", "0:0:0:0:0:0:0:1"])
    func loopback(host: String) {
        #expect(Loopback.contains(host: host))
    }

    @Test(arguments: [
        "127.attacker.example", "127.0.0.1.attacker.example", "127.0.0.1.nip.io", "localhost.attacker.example", "128.0.0.1",
        "126.255.255.255", "127.1", "127.0.0.256", "0127.0.0.1", "127.0.0.1 ", "::2", "[::]", "::ffff:8.8.8.8", "", "example.com",
    ])
    func notLoopback(host: String) {
        #expect(!Loopback.contains(host: host))
    }

    @Test func aWebhookURLNamedLike127IsNotLoopback() throws {
        func problem(_ url: String) throws -> String? {
            WebhookEndpoint(name: "e", url: try #require(URL(string: url)), secrets: ["loopback-test-secret-0123456789abcdef"]).problem(
                allowHTTP: false)
        }
        #expect(try problem("http://127.attacker.example/hook")?.contains("only to loopback") == true)
        #expect(try problem("http://127.0.0.1.attacker.example:8080/hook")?.contains("only to loopback") == true)
        #expect(try problem("http://127.0.0.1:8080/hook") == nil)
        #expect(try problem("http://[::1]:8080/hook") == nil)
        #expect(try problem("https://127.attacker.example/hook") == nil)
    }

    @Test func applesURLNamedLike127IsNotProtected() throws {
        #expect(!VerifierConfiguration.isProtected(try #require(URL(string: "http://127.attacker.example/inApps/v1"))))
        #expect(VerifierConfiguration.isProtected(try #require(URL(string: "http://127.0.0.1:9700/inApps/v1"))))
        #expect(VerifierConfiguration.isProtected(try #require(URL(string: "https://api.storekit.itunes.apple.com"))))
    }
}
