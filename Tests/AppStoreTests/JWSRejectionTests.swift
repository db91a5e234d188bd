import AppStore
import AppStoreTesting
@preconcurrency import Crypto
import Foundation
import Testing
import X509

/// Every rejection code, provoked with certificates generated in the test.
@Suite struct JWSRejectionTests {
    let authority: TestCertificateAuthority
    let verifier: SignedDataVerifier

    init() throws {
        authority = try TestCertificateAuthority()
        verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
    }

    func code(_ jws: String) async -> FailureCode? {
        await verifier.verifyTransaction(jws).failure?.code
    }

    @Test func genuineTransactionIsAccepted() async throws {
        let jws = try authority.signer().sign(JWSTestSupport.transaction(id: "42"))
        let transaction = try #require(await verifier.verifyTransaction(jws).value)
        #expect(transaction.transactionId == "42")
        #expect(transaction.type == .consumable)
    }

    @Test func selfSignedLeafInX5cIsInvalidChain() async throws {
        let attackerKey = P256.Signing.PrivateKey()
        let validity = Date().addingTimeInterval(-86_400)...Date().addingTimeInterval(86_400 * 365)
        let forgedLeaf = try TestCertificateAuthority.selfSignedLeaf(key: attackerKey, validity: validity)
        let signer = JWSSigner(
            key: attackerKey,
            x5cDER: [
                TestCertificateAuthority.derEncoded(forgedLeaf), authority.intermediateDER, authority.rootDER,
            ])
        #expect(await code(try signer.sign(JWSTestSupport.transaction())) == .invalidChain)
    }

    @Test func untrustedRootIsInvalidChain() async throws {
        let other = try TestCertificateAuthority()
        #expect(await code(try other.signer().sign(JWSTestSupport.transaction())) == .invalidChain)
    }

    @Test func x5cRootThatIsNotTheTrustedRootIsInvalidChain() async throws {
        let other = try TestCertificateAuthority()
        let signer = JWSSigner(key: authority.leafKey, x5cDER: [authority.leafDER, authority.intermediateDER, other.rootDER])
        #expect(await code(try signer.sign(JWSTestSupport.transaction())) == .invalidChain)
    }

    @Test func leafWithoutAppleOIDIsInvalidChain() async throws {
        var options = TestCertificateAuthority.Options()
        options.leafHasAppleOID = false
        let variant = try authority.withNewLeaf(options: options)
        #expect(await code(try variant.signer().sign(JWSTestSupport.transaction())) == .invalidChain)
    }

    @Test func intermediateWithoutAppleOIDIsInvalidChain() async throws {
        var options = TestCertificateAuthority.Options()
        options.intermediateHasAppleOID = false
        let variant = try authority.withNewIntermediate(options: options)
        #expect(await code(try variant.signer().sign(JWSTestSupport.transaction())) == .invalidChain)
    }

    @Test(arguments: [2, 4])
    func x5cOfWrongLengthIsRejected(count: Int) async throws {
        let chain = [authority.leafDER, authority.intermediateDER, authority.rootDER, authority.rootDER]
        let signer = JWSSigner(key: authority.leafKey, x5cDER: Array(chain.prefix(count)))
        let failure = await code(try signer.sign(JWSTestSupport.transaction()))
        #expect(failure == .invalidChain || failure == .invalidFormat)
    }

    @Test func algNoneIsUnsupported() async throws {
        let signed = try authority.signer().sign(JWSTestSupport.transaction())
        let header = JWSHeader(alg: "none", x5c: authority.signer().header.x5c)
        var jws = JWSTestSupport.replacingSegment(signed, index: 0, with: Base64URL.encode(try JSONEncoder().encode(header)))
        jws = JWSTestSupport.replacingSegment(jws, index: 2, with: "")
        #expect(await code(jws) == .unsupportedAlgorithm)
    }

    @Test(arguments: ["HS256", "RS256", "ES384", "es256", "PS256"])
    func otherAlgorithmsAreUnsupported(alg: String) async throws {
        let signer = authority.signer()
        let header = JWSHeader(alg: alg, x5c: signer.header.x5c)
        let jws = try signer.sign(json: JWSTestSupport.json(JWSTestSupport.transaction()), header: header)
        #expect(await code(jws) == .unsupportedAlgorithm)
    }

    /// A header naming `alg` (or `x5c`) twice is refused before any chain or signature work: readers disagree on
    /// which member counts, and ingest's door check reads the header with the same reader (`JWSHeader.read`).
    @Test func aHeaderNamingAMemberTwiceIsInvalidFormat() async throws {
        let signer = authority.signer()
        let signed = try signer.sign(JWSTestSupport.transaction())
        let chain = try #require(signer.header.x5c).map { "\"\($0)\"" }.joined(separator: ",")
        for header in [#"{"alg":"none","alg":"ES256","x5c":[\#(chain)]}"#, #"{"alg":"ES256","x5c":[],"x5c":[\#(chain)]}"#] {
            let jws = JWSTestSupport.replacingSegment(signed, index: 0, with: Base64URL.encode(Data(header.utf8)))
            #expect(await code(jws) == .invalidFormat, "\(header.prefix(40))")
        }
    }

    @Test func hs256KeyConfusionIsUnsupported() async throws {
        let jws = try JWSTestSupport.hs256KeyConfusion(
            authority: authority, payload: JWSTestSupport.json(JWSTestSupport.transaction())
        )
        #expect(await code(jws) == .unsupportedAlgorithm)
    }

    @Test func tamperedPayloadIsInvalidSignature() async throws {
        let jws = try authority.signer().sign(JWSTestSupport.transaction(id: "1"))
        let forgedPayload = Base64URL.encode(try JSONEncoder().encode(JWSTestSupport.transaction(id: "2")))
        #expect(await code(JWSTestSupport.replacingSegment(jws, index: 1, with: forgedPayload)) == .invalidSignature)
    }

    @Test func derEncodedSignatureIsInvalidSignature() async throws {
        let jws = try JWSTestSupport.derSignature(authority: authority, payload: JWSTestSupport.json(JWSTestSupport.transaction()))
        #expect(await code(jws) == .invalidSignature)
    }

    @Test func expiredLeafAtSignedDateIsCertificateExpired() async throws {
        var options = TestCertificateAuthority.Options()
        options.leafValidity = Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 1_650_000_000)
        let variant = try authority.withNewLeaf(options: options)
        let expired = try variant.signer().sign(JWSTestSupport.transaction())
        #expect(await code(expired) == .certificateExpired)
        // Signed while the leaf was valid: accepted offline, however long ago.
        let signedThen = try variant.signer().sign(JWSTestSupport.transaction(signedDate: 1_620_000_000_000))
        #expect(await verifier.verifyTransaction(signedThen).value != nil)
    }

    @Test func notYetValidLeafIsCertificateExpired() async throws {
        var options = TestCertificateAuthority.Options()
        options.leafValidity = Date().addingTimeInterval(86_400 * 30)...Date().addingTimeInterval(86_400 * 400)
        let variant = try authority.withNewLeaf(options: options)
        #expect(await code(try variant.signer().sign(JWSTestSupport.transaction())) == .certificateExpired)
    }

    @Test func wrongBundleIdEnvironmentAndAppAppleId() async throws {
        let signer = authority.signer()
        #expect(await code(try signer.sign(JWSTestSupport.transaction(bundleId: "com.evil.app"))) == .wrongBundleID)
        #expect(await code(try signer.sign(JWSTestSupport.transaction(environment: .production))) == .wrongEnvironment)

        let production = try JWSTestSupport.verifier(roots: [authority.rootDER], environment: .production)
        let notification = try signer.sign(
            JWSTestSupport.notification(
                signedTransactionInfo: nil, environment: .production, appAppleId: 999
            ))
        #expect(await production.verifyNotification(notification).failure?.code == .wrongAppAppleID)
        let right = try signer.sign(JWSTestSupport.notification(signedTransactionInfo: nil, environment: .production))
        #expect(await production.verifyNotification(right).value != nil)
    }

    @Test func appTransactionIsVerifiedWithItsReceiptTypeAndAppAppleId() async throws {
        let production = try JWSTestSupport.verifier(roots: [authority.rootDER], environment: .production)
        var app = AppTransaction(
            receiptType: .production, appAppleId: JWSTestSupport.appAppleId, bundleId: JWSTestSupport.bundleId,
            applicationVersion: "7", signedDate: JWSTestSupport.nowMilliseconds()
        )
        #expect(await production.verifyAppTransaction(try authority.signer().sign(app)).value?.applicationVersion == "7")
        let any = await production.verifyAny(try authority.signer().sign(app))
        #expect(any.value?.kind == "appTransaction")
        app.appAppleId = 1
        #expect(await production.verifyAppTransaction(try authority.signer().sign(app)).failure?.code == .wrongAppAppleID)
        app.receiptType = .sandbox
        #expect(await production.verifyAppTransaction(try authority.signer().sign(app)).failure?.code == .sandboxNotAllowed)
    }

    @Test func productionNeedsAnAppAppleId() throws {
        #expect(throws: SignedDataVerifierConfigurationError.self) {
            try SignedDataVerifier(
                configuration: SignedDataVerifierConfiguration(
                    rootCertificates: [authority.rootDER], bundleId: "x", environment: .production
                ))
        }
    }

    @Test func forgedNestedTransactionInGenuineNotificationIsRejected() async throws {
        let attacker = try TestCertificateAuthority()
        let forged = try attacker.signer().sign(JWSTestSupport.transaction(id: "777"))
        let notification = try authority.signer().sign(JWSTestSupport.notification(signedTransactionInfo: forged))
        let failure = try #require(await verifier.verifyNotification(notification).failure)
        #expect(failure.code == .invalidChain)
        #expect(failure.message.hasPrefix("signedTransactionInfo"))

        let genuine = try authority.signer().sign(JWSTestSupport.transaction(id: "778"))
        let good = try authority.signer().sign(JWSTestSupport.notification(signedTransactionInfo: genuine))
        let verified = try #require(await verifier.verifyNotification(good).value)
        #expect(verified.transaction?.payload.transactionId == "778")
    }

    @Test func nestedTransactionForAnotherAppIsRejectedEvenWithoutConfiguredBundle() async throws {
        let tool = try JWSTestSupport.verifier(roots: [authority.rootDER], bundleId: nil, environment: nil)
        let nested = try authority.signer().sign(JWSTestSupport.transaction(bundleId: "com.other.app"))
        let notification = try authority.signer().sign(JWSTestSupport.notification(signedTransactionInfo: nested))
        #expect(await tool.verifyNotification(notification).failure?.code == .wrongBundleID)
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "!!!.###.$$$", "eyJ9.e30.AAAA", "@@@.e30.AAAA"])
    func garbageIsInvalidFormat(input: String) async {
        #expect(await code(input) == .invalidFormat)
    }

    /// Issue 29 item 5: a signature's last base64url character carries four unused bits, so one signature had 16
    /// spellings that all verified. Only the canonical one (unused bits zero) decodes now.
    @Test func onlyTheCanonicalSpellingOfASignatureVerifies() async throws {
        let jws = try authority.signer().sign(JWSTestSupport.transaction(id: "7"))
        let segments = jws.split(separator: ".").map(String.init)
        #expect(segments[2].count == 86)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let final = try #require(segments[2].last)
        let last = try #require(alphabet.firstIndex(of: final))
        #expect(last & 0x0F == 0)
        var verified = 0
        for unused in 0..<16 {
            let spelling = String(segments[2].dropLast()) + String(alphabet[last | unused])
            let result = await verifier.verifyTransaction("\(segments[0]).\(segments[1]).\(spelling)")
            if result.value != nil { verified += 1 } else { #expect(result.failure?.code == .invalidFormat) }
        }
        #expect(verified == 1)
    }

    /// Every decoded value has exactly one spelling: encoding what decoded gives the input back, and a final
    /// character with unused bits set decodes to nothing.
    @Test func base64URLDecodesOnlyCanonicalSpellings() {
        for length in 1...3 {
            for seed in 0..<40 {
                let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ seed &* 31) }
                let canonical = Base64URL.encode(bytes)
                #expect(Base64URL.decode(canonical) == bytes)
                let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
                guard length < 3, let final = canonical.last, let index = alphabet.firstIndex(of: final) else { continue }
                let unusedBits = length == 1 ? 4 : 2
                for unused in 1..<(1 << unusedBits) {
                    let spelling = String(canonical.dropLast()) + String(alphabet[index | unused])
                    #expect(Base64URL.decode(spelling) == nil, "\(spelling) decoded")
                }
            }
        }
    }
}
