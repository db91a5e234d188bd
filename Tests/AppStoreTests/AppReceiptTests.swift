import AppStore
import AppStoreTesting
@preconcurrency import Crypto
import Foundation
import SwiftASN1
import TestSupport
import Testing
import X509

/// Reading app receipts (PKCS#7) and proving Apple signed them: Xcode's receipts from Apple's library, receipts a
/// test authority signs, and every way a forged one differs.
@Suite struct AppReceiptTests {
    static let authority = Result { try TestCertificateAuthority() }
    static let created = Date(timeIntervalSince1970: 1_790_000_000)

    static func receipt(bundleId: String = "com.example.app", purchases: [AppReceiptPurchase]? = nil) -> AppReceipt {
        AppReceipt(
            receiptType: "ProductionSandbox", bundleId: bundleId, applicationVersion: "7", opaqueValue: [1, 2, 3],
            creationDate: created,
            purchases: purchases ?? [
                AppReceiptPurchase(
                    quantity: 2, productId: "coins.100", transactionId: "2000000111", originalTransactionId: "2000000111",
                    purchaseDate: created.addingTimeInterval(-60)),
                AppReceiptPurchase(
                    quantity: 1, productId: "vip.month", transactionId: "2000000222", originalTransactionId: "2000000200",
                    purchaseDate: created.addingTimeInterval(-30), expiresDate: created.addingTimeInterval(86_400)),
            ])
    }

    static func verifier(trusting authority: TestCertificateAuthority) throws -> ReceiptSignatureVerifier {
        try ReceiptSignatureVerifier(
            rootCertificates: [AppleRootCertificates.appleIncRoot, authority.rootDER],
            intermediateCertificates: AppleRootCertificates.receiptIntermediates + [authority.intermediateDER])
    }

    @Test func xcodeReceiptsFromApplesLibraryAreRead() throws {
        let withTransaction = try AppReceiptParser.parse(
            Array(try #require(Data(base64Encoded: AppleLibraryReceipts.xcodeWithTransaction))))
        #expect(withTransaction.receiptType == "Xcode")
        #expect(withTransaction.environment == nil)
        #expect(withTransaction.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(withTransaction.purchases.count == 1)
        #expect(withTransaction.purchases.first?.transactionId == "0")
        #expect(withTransaction.purchases.first?.productId == "pass.premium")
        #expect(withTransaction.transactionIdentifiers == ["0"])
        #expect(withTransaction.creationDate == Date(timeIntervalSince1970: 1_697_679_940))  // 2023-10-19T01:45:40Z

        let empty = try AppReceiptParser.parse(Array(try #require(Data(base64Encoded: AppleLibraryReceipts.xcodeEmpty))))
        #expect(empty.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(empty.purchases.isEmpty)
        #expect(empty.transactionIdentifiers.isEmpty)
    }

    @Test func aTransactionReceiptYieldsItsTransactionID() throws {
        let bytes = Array(try #require(Data(base64Encoded: AppleLibraryReceipts.legacyTransaction)))
        #expect(TransactionReceipt(decoded: bytes)?.transactionId == "33993399")
        #expect(TransactionReceipt(decoded: Array(#"{ "signature" = "AA=="; }"#.utf8)) == nil)
        #expect(TransactionReceipt(decoded: [0xFF, 0xFE, 0x00]) == nil)
    }

    @Test func aSignedReceiptRoundTripsAndVerifies() async throws {
        let authority = try Self.authority.get()
        let bytes = try authority.receiptSigner().sign(Self.receipt())
        let verified = try await Self.verifier(trusting: authority).verify(bytes).get()
        #expect(verified == Self.receipt())
        #expect(verified.environment == .sandbox)
        #expect(verified.transactionIdentifiers == ["2000000111", "2000000222", "2000000200"])
    }

    @Test func xcodesSelfSignedReceiptIsNotAuthenticEvenWhenItsCertificateIsTrusted() async throws {
        let bytes = Array(try #require(Data(base64Encoded: AppleLibraryReceipts.xcodeWithTransaction)))
        let apple = try ReceiptSignatureVerifier(
            rootCertificates: [AppleRootCertificates.appleIncRoot], intermediateCertificates: AppleRootCertificates.receiptIntermediates)
        #expect(try Self.failure(await apple.verify(bytes)) == .receiptNotAuthentic)
        // Trusting the self-signed StoreKit certificate itself is not enough: Apple's chain is leaf, WWDR, root.
        let storeKit = try #require(try AppReceiptParser.signedData(bytes).certificates.first)
        let trusting = try ReceiptSignatureVerifier(
            rootCertificates: [Data(storeKit)], intermediateCertificates: AppleRootCertificates.receiptIntermediates)
        #expect(try Self.failure(await trusting.verify(bytes)) == .receiptNotAuthentic)
    }

    @Test func forgedReceiptsAreNotAuthentic() async throws {
        let authority = try Self.authority.get()
        let verifier = try Self.verifier(trusting: authority)

        // Another authority shaped exactly like Apple's, but not trusted.
        let stranger = try TestCertificateAuthority()
        #expect(try Self.failure(await verifier.verify(try stranger.receiptSigner().sign(Self.receipt()))) == .receiptNotAuthentic)

        // The trusted chain's leaf without Apple's receipt-signing OID.
        var options = TestCertificateAuthority.Options()
        options.leafHasAppleOID = false
        let noOID = try authority.withNewLeaf(options: options)
        #expect(try Self.failure(await verifier.verify(try noOID.receiptSigner().sign(Self.receipt()))) == .receiptNotAuthentic)

        // A creation date the leaf was not valid at: an old leaf cannot sign new receipts.
        var late = Self.receipt()
        late.creationDate = Date().addingTimeInterval(10 * 365 * 86_400)
        #expect(try Self.failure(await verifier.verify(try authority.receiptSigner().sign(late))) == .receiptNotAuthentic)

        // The trusted leaf signing, then one transaction ID changed in the content.
        let genuine = try authority.receiptSigner().sign(Self.receipt())
        let original = Array("2000000111".utf8)
        let forged = Array("2000000999".utf8)
        let tampered = try #require(Self.replacing(original, with: forged, in: genuine))
        #expect(try AppReceiptParser.parse(tampered).purchases.first?.transactionId == "2000000999")
        #expect(try Self.failure(await verifier.verify(tampered)) == .receiptNotAuthentic)

        // The trusted chain, signed by a key that is not the leaf's.
        let wrongKey = AppReceiptSigner(
            key: P256.Signing.PrivateKey(), certificate: authority.leaf, intermediates: [authority.intermediate])
        #expect(try Self.failure(await verifier.verify(try wrongKey.sign(Self.receipt()))) == .receiptNotAuthentic)

        // No intermediate travelling with the leaf.
        let bare = AppReceiptSigner(key: authority.leafKey, certificate: authority.leaf, intermediates: [])
        #expect(try Self.failure(await verifier.verify(try bare.sign(Self.receipt()))) == .receiptNotAuthentic)
    }

    /// Once a chain is proven (and kept), every later receipt it carries is still checked: its own signature, and
    /// its creation date against the chain's validity.
    @Test func aProvenChainStillChecksEachReceipt() async throws {
        let authority = try Self.authority.get()
        let verifier = try Self.verifier(trusting: authority)
        let genuine = try authority.receiptSigner().sign(Self.receipt())
        #expect(try Self.failure(await verifier.verify(genuine)) == nil)
        #expect(try Self.failure(await verifier.verify(genuine)) == nil)

        let tampered = try #require(Self.replacing(Array("2000000111".utf8), with: Array("2000000999".utf8), in: genuine))
        #expect(try Self.failure(await verifier.verify(tampered)) == .receiptNotAuthentic)
        var late = Self.receipt()
        late.creationDate = Date().addingTimeInterval(10 * 365 * 86_400)
        #expect(try Self.failure(await verifier.verify(try authority.receiptSigner().sign(late))) == .receiptNotAuthentic)
        let wrongKey = AppReceiptSigner(
            key: P256.Signing.PrivateKey(), certificate: authority.leaf, intermediates: [authority.intermediate])
        #expect(try Self.failure(await verifier.verify(try wrongKey.sign(Self.receipt()))) == .receiptNotAuthentic)
        #expect(try Self.failure(await verifier.verify(genuine)) == nil)
    }

    @Test func whatIsNotAReceiptIsMalformed() async throws {
        let authority = try Self.authority.get()
        let verifier = try Self.verifier(trusting: authority)
        let genuine = try authority.receiptSigner().sign(Self.receipt())
        for bytes in [[], [0x30, 0x80], Array("SIMRCPT1 not pkcs7".utf8), Array(genuine.prefix(genuine.count / 2))] {
            #expect(try Self.failure(await verifier.verify(bytes)) == .receiptMalformed)
        }
        // Signed content that is not a set of attributes.
        let notAttributes = try authority.receiptSigner().sign(payload: Array("hello".utf8))
        #expect(try Self.failure(await verifier.verify(notAttributes)) == .receiptMalformed)
        // No creation date: no time to check the chain at.
        var undated = Self.receipt()
        undated.creationDate = nil
        #expect(try Self.failure(await verifier.verify(try authority.receiptSigner().sign(undated))) == .receiptMalformed)
    }

    /// The receipt certificate bomb (``CrossSignedReceipt``): with every embedded certificate a candidate
    /// intermediate, swift-certificates' path search took 0.04 s at 4 keys, 3 s at 6, 32 s at 7 and minutes at 8.
    @Test(.timeLimit(.minutes(1))) func aReceiptWhoseCertificatesCrossSignEachOtherIsRefusedInMilliseconds() async throws {
        let authority = try Self.authority.get()
        let verifier = try Self.verifier(trusting: authority)
        let clock = ContinuousClock()

        // k = 8: 56 cross-signed certificates, refused by count before any is read.
        let bomb = try CrossSignedReceipt.make(keys: 8, receipt: Self.receipt())
        var refusal: Result<AppReceipt, VerificationFailure>?
        let counted = await clock.measure { refusal = await verifier.verify(bomb) }
        #expect(try Self.failure(try #require(refusal)) == .receiptTooManyCertificates)
        #expect(counted < .seconds(1), "refused by count in \(counted)")

        // Without the count, k = 6 (30 certificates): none is a configured intermediate, so none reaches the search.
        let uncounted = try ReceiptSignatureVerifier(
            rootCertificates: [AppleRootCertificates.appleIncRoot, authority.rootDER],
            intermediateCertificates: AppleRootCertificates.receiptIntermediates + [authority.intermediateDER],
            maximumCertificates: 100)
        let six = try CrossSignedReceipt.make(keys: 6, receipt: Self.receipt())
        let reduced = await clock.measure { refusal = await uncounted.verify(six) }
        #expect(try Self.failure(try #require(refusal)) == .receiptNotAuthentic)
        #expect(reduced < .seconds(1), "refused by the reduction in \(reduced)")
        // The same verifier still proves a genuine receipt.
        #expect(try Self.failure(await uncounted.verify(try authority.receiptSigner().sign(Self.receipt()))) == nil)
    }

    /// The shape Apple signs with: the signer and one configured intermediate. An embedded root is ignored, not
    /// refused; an intermediate that chains to a trusted root but is not configured does not make the chain.
    @Test func onlyAConfiguredIntermediateMakesTheChain() async throws {
        let authority = try Self.authority.get()
        let verifier = try Self.verifier(trusting: authority)
        let withRoot = AppReceiptSigner(
            key: authority.leafKey, certificate: authority.leaf, intermediates: [authority.intermediate, authority.root])
        #expect(try Self.failure(await verifier.verify(try withRoot.sign(Self.receipt()))) == nil)

        // The same root, an intermediate the deployment does not list: valid under RFC 5280, refused here.
        let unlisted = try authority.withNewIntermediate(options: TestCertificateAuthority.Options())
        #expect(try Self.failure(await verifier.verify(try unlisted.receiptSigner().sign(Self.receipt()))) == .receiptNotAuthentic)
        // Listing it is a setting, not code.
        let listing = try ReceiptSignatureVerifier(
            rootCertificates: [authority.rootDER], intermediateCertificates: [unlisted.intermediateDER])
        #expect(try Self.failure(await listing.verify(try unlisted.receiptSigner().sign(Self.receipt()))) == nil)

        // Two listed intermediates that both claim to have issued the leaf: refused, not searched.
        let twin = AppReceiptSigner(
            key: authority.leafKey, certificate: authority.leaf, intermediates: [authority.intermediate, unlisted.intermediate])
        let both = try ReceiptSignatureVerifier(
            rootCertificates: [authority.rootDER], intermediateCertificates: [authority.intermediateDER, unlisted.intermediateDER])
        #expect(try Self.failure(await both.verify(try twin.sign(Self.receipt()))) == .receiptNotAuthentic)
    }

    @Test func applesReceiptIntermediatesArePinnedAndChainToAppleIncRoot() async throws {
        let fingerprints = AppleRootCertificates.receiptIntermediates.map { der in
            SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined()
        }
        #expect(
            fingerprints == [
                "CE057691D730F89CA25E916F7335F4C8A15713DCD273A658C024023F8EB809C2",  // G1
                "DCF21878C77F4198E4B4614F03D696D89C66C66008D4244E1B99161AAC91601F",  // G3
                "EA4757885538DD8CB59FF4556F676087D83C85E70902C122E42C0808B5BCE14C",  // G4
                "53FD008278E5A595FE1E908AE9C5E5675F26243264A5A6438C023E3CE2870760",  // G5
                "0F570D7502373A2102E2106FAAA8FA4844944A07EE676198484F4D6CE15BEA47",  // G7
                "29901BADEA37C9F300CE9869956BEEB001D7E71BFFB2E2D9533E132A4E87E6BD",  // G8
            ])
        let root = try Certificate(derEncoded: Array(AppleRootCertificates.appleIncRoot))
        for der in AppleRootCertificates.receiptIntermediates {
            let intermediate = try Certificate(derEncoded: Array(der))
            #expect(intermediate.issuer == root.subject)
            #expect(intermediate.extensions[oid: AppleChainPolicy.intermediateOID] != nil)
            #expect(root.publicKey.isValidSignature(intermediate.signature, for: intermediate))
        }
    }

    @Test func appleIncRootIsPinned() {
        let fingerprint = SHA256.hash(data: AppleRootCertificates.appleIncRoot).map { String(format: "%02X", $0) }.joined()
        #expect(fingerprint == "B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024")
    }

    static func failure(_ result: Result<AppReceipt, VerificationFailure>) throws -> FailureCode? {
        guard case .failure(let failure) = result else { return nil }
        return failure.code
    }

    static func replacing(_ old: [UInt8], with new: [UInt8], in bytes: [UInt8]) -> [UInt8]? {
        guard old.count == new.count, bytes.count >= old.count else { return nil }
        for start in 0...(bytes.count - old.count) where Array(bytes[start..<start + old.count]) == old {
            var result = bytes
            result.replaceSubrange(start..<start + old.count, with: new)
            return result
        }
        return nil
    }
}
