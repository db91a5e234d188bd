import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Pipeline
import TestSupport
import Testing

@testable import ingest

/// User tokens beyond their signature (issue 13, item 8): `nbf`, a longest lifetime, the configured issuer and
/// audience, and user ids that are safe inside Redis keys and compared byte for byte.
@Suite struct UserTokenTests {
    static func sign(_ claims: UserClaims) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: IngestHarness.secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    static func claims(
        _ sub: String = "alice", expiresIn: TimeInterval = 300, notBefore: TimeInterval? = nil,
        issuedAt: TimeInterval? = nil, issuer: String? = nil, audience: [String]? = nil
    ) -> UserClaims {
        UserClaims(
            sub: .init(value: sub), exp: .init(value: Date().addingTimeInterval(expiresIn)),
            nbf: notBefore.map { .init(value: Date().addingTimeInterval($0)) },
            iat: issuedAt.map { .init(value: Date().addingTimeInterval($0)) },
            iss: issuer.map { .init(value: $0) }, aud: audience.map { .init(value: $0) })
    }

    /// The status of an entitlements read with a token of `claims` (0 when the request itself failed).
    static func answer(_ client: any TestClientProtocol, _ claims: UserClaims) async -> Int {
        guard let token = try? await sign(claims),
            let response = try? await client.execute(
                uri: "/v1/users/\(claims.sub.value)/entitlements", method: .get,
                headers: IngestHarness.bearer(token))
        else { return 0 }
        return Int(response.status.code)
    }

    /// The bearer token is the header's second word without the spaces and tabs around it, and nothing else is
    /// removed: not inner blanks, not other whitespace, not non-ASCII neighbours.
    @Test func bearerTokensLoseOnlyTheBlanksAroundThem() {
        let cases: [(Substring, String)] = [
            ("abc", "abc"), (" \t abc \t ", "abc"), ("\t\t", ""), ("", ""), (" a b ", "a b"), ("\nabc\r", "\nabc\r"),
            (" é\u{A0} ", "é\u{A0}"), ("\u{3000}x\u{3000}", "\u{3000}x\u{3000}"), ("x.y.z\t", "x.y.z"),
        ]
        for (raw, expected) in cases {
            #expect(Authenticator.trimmingBlanks(raw) == expected, "\(raw.debugDescription)")
        }
        // A substring of a longer header is trimmed within its own bounds.
        let header = "Bearer  token\t"
        #expect(Authenticator.trimmingBlanks(header.split(separator: " ", maxSplits: 1)[1]) == "token")
    }

    @Test func notBeforeAndLifetimeAreEnforced() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                #expect(await Self.answer(client, Self.claims()) == 200)
                #expect(await Self.answer(client, Self.claims(notBefore: -10)) == 200)
                #expect(await Self.answer(client, Self.claims(notBefore: 600)) == 401)
                // The default longest lifetime is a day: a token valid for two is refused, however it was issued.
                #expect(await Self.answer(client, Self.claims(expiresIn: 2 * 86_400)) == 401)
                #expect(await Self.answer(client, Self.claims(expiresIn: 3600, issuedAt: -2 * 86_400)) == 401)
                #expect(await Self.answer(client, Self.claims(expiresIn: 3600, issuedAt: -60)) == 200)
            }
        }
    }

    @Test func issuerAndAudienceAreCheckedWhenConfigured() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.clientJWTIssuer = "https://auth.example.com"
                    $0.clientJWTAudience = "tollgate"
                }
            ) { client in
                #expect(await Self.answer(client, Self.claims(issuer: "https://auth.example.com", audience: ["tollgate", "x"])) == 200)
                #expect(await Self.answer(client, Self.claims()) == 401)
                #expect(await Self.answer(client, Self.claims(issuer: "https://evil.example.com", audience: ["tollgate"])) == 401)
                #expect(await Self.answer(client, Self.claims(issuer: "https://auth.example.com", audience: ["other"])) == 401)
            }
        }
    }

    /// Ids with key syntax, spaces, non-ASCII or more than 128 bytes are refused; equal-looking Unicode ids are
    /// different users.
    @Test func userIdsAreAnExplicitByteAllowList() async throws {
        for id in ["alice", "user-42", "a.b_c@example.com", String(repeating: "x", count: 128)] {
            #expect(UserID.isValid(id), "\(id)")
        }
        for id in ["", "a b", "a:b", "{u:alice}", "alice\n", "\u{e9}", "e\u{301}", "ａlice", String(repeating: "x", count: 129)] {
            #expect(!UserID.isValid(id), "\(id)")
        }
        #expect("\u{e9}" == "e\u{301}", "Swift's String equality is canonical equivalence")
        #expect(!Principal.user("e\u{301}").mayRead(user: "\u{e9}"))
        #expect(Principal.user("alice").mayRead(user: "alice"))
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                for id in ["a:b", "{u:x}", "e\u{301}"] {
                    #expect(await Self.answer(client, Self.claims(id)) == 401, "\(id)")
                }
            }
        }
    }
}
