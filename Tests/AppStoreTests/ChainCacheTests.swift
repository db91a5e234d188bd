import AppStore
import AppStoreTesting
import Foundation
import Testing
import X509

/// The chain cache: proven chains are reused, but validity is still checked per JWS, and the cache
/// stays bounded.
@Suite struct ChainCacheTests {
    @Test func secondVerificationOfTheSameChainHitsTheCache() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let signer = authority.signer()
        #expect(await verifier.verifyTransaction(try signer.sign(JWSTestSupport.transaction(id: "1"))).value != nil)
        #expect(await verifier.verifyTransaction(try signer.sign(JWSTestSupport.transaction(id: "2"))).value != nil)
        let stats = verifier.chainCache.statistics
        #expect(stats.misses == 1)
        #expect(stats.hits == 1)
        #expect(stats.count == 1)
    }

    @Test func realAppleChainIsProvenOnceAndReused() async throws {
        let verifier = try JWSTestSupport.verifier(
            roots: [try JWSTestSupport.appleRootDER], bundleId: "com.goodheartapp", environment: .sandbox
        )
        let jws = try JWSTestSupport.vector("transaction-consumable-sandbox-1.jws")
        for _ in 0..<5 {
            #expect(await verifier.verifyTransaction(jws).value?.transactionId == "2000000847061981")
        }
        #expect(verifier.chainCache.statistics.hits == 4)
        #expect(verifier.chainCache.statistics.misses == 1)
    }

    @Test func cachedChainIsRejectedOutsideTheLeafValidity() async throws {
        var options = TestCertificateAuthority.Options()
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        options.leafValidity = start...start.addingTimeInterval(86_400 * 30)
        let authority = try TestCertificateAuthority().withNewLeaf(options: options)
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let signer = authority.signer()
        let inside = try signer.sign(JWSTestSupport.transaction(signedDate: 1_700_000_000_000 + 86_400_000))
        #expect(await verifier.verifyTransaction(inside).value != nil)
        let after = try signer.sign(JWSTestSupport.transaction(signedDate: 1_700_000_000_000 + 86_400_000 * 31))
        #expect(await verifier.verifyTransaction(after).failure?.code == .certificateExpired)
        let before = try signer.sign(JWSTestSupport.transaction(signedDate: 1_700_000_000_000 - 1000))
        #expect(await verifier.verifyTransaction(before).failure?.code == .certificateExpired)
        #expect(verifier.chainCache.statistics.hits == 2, "the rejections came from cached chains")
    }

    @Test func cachedChainStillNeedsAValidSignature() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let jws = try authority.signer().sign(JWSTestSupport.transaction(id: "1"))
        #expect(await verifier.verifyTransaction(jws).value != nil)
        let other = Base64URL.encode(try JSONEncoder().encode(JWSTestSupport.transaction(id: "9")))
        let tampered = JWSTestSupport.replacingSegment(jws, index: 1, with: other)
        #expect(await verifier.verifyTransaction(tampered).failure?.code == .invalidSignature)
        #expect(verifier.chainCache.statistics.hits == 1)
    }

    @Test func cacheStaysBounded() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER], cacheCapacity: 3)
        for index in 0..<5 {
            let leaf = try authority.withNewLeaf(options: .init())
            #expect(await verifier.verifyTransaction(try leaf.signer().sign(JWSTestSupport.transaction(id: "\(index)"))).value != nil)
        }
        let stats = verifier.chainCache.statistics
        #expect(stats.count == 3)
        #expect(stats.evictions == 2)
        #expect(stats.misses == 5)
    }

    @Test func disabledCacheNeverHits() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER], cacheCapacity: 0)
        let jws = try authority.signer().sign(JWSTestSupport.transaction())
        #expect(await verifier.verifyTransaction(jws).value != nil)
        #expect(await verifier.verifyTransaction(jws).value != nil)
        #expect(verifier.chainCache.statistics.hits == 0)
        #expect(verifier.chainCache.statistics.count == 0)
    }

    @Test func concurrentVerificationsShareOneProvenChain() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let signer = authority.signer()
        let tokens = try (0..<64).map { try signer.sign(JWSTestSupport.transaction(id: "\($0)")) }
        let verified = await withTaskGroup(of: Bool.self) { group in
            for token in tokens {
                group.addTask { await verifier.verifyTransaction(token).value != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(verified == 64)
        let stats = verifier.chainCache.statistics
        #expect(stats.count == 1)
        #expect(stats.hits + stats.misses == 64)
    }

    /// Issue 13, item 8: a genuine chain carrying a forged signature is refused without entering the cache of
    /// confirmed chains, so forgeries can neither fill nor evict it; only a verified signature confirms a chain. The
    /// chain's proof is kept apart, so the next forgery with it costs one signature check, not a chain validation.
    @Test func aForgedSignatureNeverEntersTheCache() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER], cacheCapacity: 1)
        let genuine = try authority.signer().sign(JWSTestSupport.transaction(id: "1"))
        let forgedPayload = Base64URL.encode(try JSONEncoder().encode(JWSTestSupport.transaction(id: "2")))
        let forged = JWSTestSupport.replacingSegment(genuine, index: 1, with: forgedPayload)
        for _ in 0..<3 {
            #expect(await verifier.verifyTransaction(forged).failure?.code == .invalidSignature)
        }
        #expect(verifier.chainCache.statistics.count == 0, "no confirmed chain")
        #expect(verifier.chainCache.statistics.misses == 1, "the chain was validated once, then its proof reused")
        #expect(await verifier.verifyTransaction(genuine).value != nil)
        #expect(verifier.chainCache.statistics.count == 1)
        #expect(verifier.chainCache.statistics.misses == 1)
        // Another leaf's forgeries cannot evict it.
        let other = try authority.withNewLeaf(options: .init()).signer().sign(JWSTestSupport.transaction(id: "3"))
        let otherForged = JWSTestSupport.replacingSegment(other, index: 1, with: forgedPayload)
        #expect(await verifier.verifyTransaction(otherForged).failure?.code == .invalidSignature)
        #expect(await verifier.verifyTransaction(otherForged).failure?.code == .invalidSignature)
        #expect(verifier.chainCache.statistics.evictions == 0)
        #expect(verifier.chainCache.statistics.misses == 2)
        let hits = verifier.chainCache.statistics.hits
        #expect(await verifier.verifyTransaction(genuine).value != nil)
        #expect(verifier.chainCache.statistics.hits == hits + 1)
        #expect(verifier.chainCache.statistics.count == 1)
    }

    /// The cache is keyed by the chain's DER, not the header's bytes: a header padded with other members (which a
    /// forger can vary at will) finds the proven chain, so such a forgery costs one P-256 verification, not a chain.
    @Test func headerVariantsOfOneChainShareTheEntry() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let genuine = try authority.signer().sign(JWSTestSupport.transaction(id: "1"))
        #expect(await verifier.verifyTransaction(genuine).value != nil)
        let header = try #require(CompactJWS(genuine).flatMap { $0.decode($0.header) })
        var object = try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])
        for index in 0..<5 {
            object["kid"] = "variant-\(index)"
            let variant = Base64URL.encode(try JSONSerialization.data(withJSONObject: object))
            let forged = JWSTestSupport.replacingSegment(genuine, index: 0, with: variant)
            #expect(await verifier.verifyTransaction(forged).failure?.code == .invalidSignature)
        }
        let stats = verifier.chainCache.statistics
        #expect(stats.misses == 1)
        #expect(stats.hits == 5)
    }

    /// A chain that does not end at a trusted root's exact bytes is refused before its certificates are parsed.
    @Test func aChainNotEndingAtATrustedRootIsRefusedFirst() async throws {
        let trusted = try TestCertificateAuthority()
        let stranger = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [trusted.rootDER])
        let jws = try stranger.signer().sign(JWSTestSupport.transaction(id: "1"))
        let failure = await verifier.verifyTransaction(jws).failure
        #expect(failure?.code == .invalidChain)
        #expect(failure?.message.contains("x5c[2] is not a trusted root") == true, "\(String(describing: failure))")
        #expect(verifier.chainCache.statistics.misses == 0)
    }

    /// Issue 29 item 2: a refused chain is remembered with its reason, so sending it again costs a lookup: one leaf
    /// check the first time, no whole validation ever.
    @Test func aRefusedChainIsRefusedFromMemory() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let broken = try authority.brokenLeafSigner().sign(JWSTestSupport.transaction(id: "1"))
        for _ in 0..<10 {
            #expect(await verifier.verifyTransaction(broken).failure?.code == .invalidChain)
        }
        let stats = verifier.chainCache.statistics
        #expect(stats.intermediateChecks == 1)
        #expect(stats.leafChecks == 1)
        #expect(stats.validations == 0)
        #expect(stats.refusals == 9)
    }

    /// An intermediate is checked against the roots once, and remembered either way: leaves under an impostor named
    /// like the real intermediate are refused without a signature check each, and a fresh broken leaf under the real
    /// one costs its one leaf check, never a whole validation.
    @Test func eachIntermediateIsCheckedOnceAndRememberedEitherWay() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let impostor = try authority.impostorIntermediate()
        #expect(impostor.intermediate.subject == authority.intermediate.subject)
        for index in 0..<10 {
            let leaf = try impostor.withNewLeaf(options: .init())
            #expect(
                await verifier.verifyTransaction(try leaf.signer().sign(JWSTestSupport.transaction(id: "\(index)"))).failure?.code
                    == .invalidChain)
        }
        var stats = verifier.chainCache.statistics
        #expect(stats.intermediateChecks == 1)
        #expect(stats.leafChecks == 0)
        #expect(stats.refusals == 9)
        for index in 0..<5 {
            let broken = try authority.brokenLeafSigner().sign(JWSTestSupport.transaction(id: "\(index)"))
            #expect(await verifier.verifyTransaction(broken).failure?.code == .invalidChain)
        }
        #expect(await verifier.verifyTransaction(try authority.signer().sign(JWSTestSupport.transaction(id: "ok"))).value != nil)
        stats = verifier.chainCache.statistics
        #expect(stats.intermediateChecks == 2, "the real intermediate, once")
        #expect(stats.leafChecks == 6)
        #expect(stats.validations == 1, "only the genuine leaf is validated whole")
    }

    /// The door's budget: chains never seen before cost a token per certificate check; with none left the check is
    /// deferred (retryable) and costs nothing more, while known chains go on being answered.
    @Test func checksOfNewChainsAreTakenFromTheBudget() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let genuine = try authority.signer().sign(JWSTestSupport.transaction(id: "1"))
        #expect(await verifier.checkSignature(genuine).value != nil)
        let budget = ChainCheckBudget(ratePerSecond: 0, capacity: 3)
        var refused = 0
        var deferred = 0
        for index in 0..<10 {
            let broken = try authority.brokenLeafSigner().sign(JWSTestSupport.transaction(id: "\(index)"))
            switch await verifier.checkSignature(broken, budget: budget) {
            case .rejected(let failure):
                #expect(failure.code == .invalidChain)
                refused += 1
            case .retryable(let failure):
                #expect(failure.code == .chainCheckDeferred)
                deferred += 1
            case .verified: Issue.record("a broken leaf passed")
            }
        }
        #expect(refused == 3)
        #expect(deferred == 7)
        #expect(verifier.chainCache.statistics.leafChecks == 4, "the genuine leaf's, and three broken ones")
        // A known chain is answered from the cache whatever the budget.
        #expect(await verifier.checkSignature(genuine, budget: budget).value != nil)
        let forged = JWSTestSupport.replacingSegment(genuine, index: 1, with: Base64URL.encode(Data("{}".utf8)))
        #expect(await verifier.checkSignature(forged, budget: budget).failure?.code == .invalidSignature)
        // A new genuine leaf waits for the budget; without one (the verifier) it is proven.
        let rotated = try authority.withNewLeaf(options: .init()).signer().sign(JWSTestSupport.transaction(id: "2"))
        #expect(await verifier.checkSignature(rotated, budget: budget).failure?.code == .chainCheckDeferred)
        #expect(await verifier.checkSignature(rotated).value != nil)
    }

    /// Concurrent JWS carrying one new chain share one proof, and the budget it takes.
    @Test func concurrentRequestsWithOneNewChainShareOneProof() async throws {
        let authority = try TestCertificateAuthority()
        let verifier = try JWSTestSupport.verifier(roots: [authority.rootDER])
        let budget = ChainCheckBudget(ratePerSecond: 0, capacity: 2)
        let tokens = try (0..<32).map { try authority.signer().sign(JWSTestSupport.transaction(id: "\($0)")) }
        let verified = await withTaskGroup(of: Bool.self) { group in
            for token in tokens {
                group.addTask { await verifier.checkSignature(token, budget: budget).value != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(verified == 32)
        let stats = verifier.chainCache.statistics
        #expect(stats.validations == 1)
        #expect(stats.deferred == 0)
    }
}
