import AppStore
import AppStoreTesting
@preconcurrency import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

/// The test certificate authority and signer produce what Apple produces.
@Suite struct SigningTests {
    @Test func authorityIsShapedLikeApples() throws {
        let authority = try TestCertificateAuthority()
        #expect(authority.root.subject == authority.root.issuer)
        #expect(authority.intermediate.issuer == authority.root.subject)
        #expect(authority.leaf.issuer == authority.intermediate.subject)
        #expect(authority.intermediate.extensions[oid: AppleChainPolicy.intermediateOID] != nil)
        #expect(authority.leaf.extensions[oid: AppleChainPolicy.leafOID] != nil)
        #expect(P256.Signing.PublicKey(authority.leaf.publicKey) != nil)
        #expect(P384.Signing.PublicKey(authority.intermediate.publicKey) != nil)
        let aki = try authority.leaf.extensions.authorityKeyIdentifier?.keyIdentifier
        #expect(aki == (try authority.intermediate.extensions.subjectKeyIdentifier?.keyIdentifier))
        #expect(try authority.root.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: nil))
        #expect(try authority.leaf.extensions.basicConstraints == .notCertificateAuthority)
    }

    @Test func signerWritesAppleShapedJWS() throws {
        let authority = try TestCertificateAuthority()
        let jws = try authority.signer().sign(JWSTestSupport.transaction())
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let header = try JSONDecoder().decode(JWSHeader.self, from: Data(try #require(Base64URL.decode(parts[0]))))
        #expect(header.alg == "ES256")
        #expect(header.x5c?.count == 3)
        #expect(header.x5c?.first == authority.leafDER.base64EncodedString())
        #expect(Base64URL.decode(parts[2])?.count == 64)
    }

    @Test func authorityRoundTripsThroughADirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = try TestCertificateAuthority.loadOrCreate(directory: directory)
        let loaded = try TestCertificateAuthority.loadOrCreate(directory: directory)
        #expect(loaded.rootDER == original.rootDER)
        #expect(loaded.leafDER == original.leafDER)
        #expect(loaded.leafKey.rawRepresentation == original.leafKey.rawRepresentation)
        let keyAttributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent(TestCertificateAuthority.FileName.leafKey).path
        )
        #expect((keyAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // What the loaded authority signs verifies against the root read back as PEM.
        let roots = try TrustedRootLoader.load(
            path: directory.appendingPathComponent(TestCertificateAuthority.FileName.rootCertificatePEM).path
        )
        #expect(roots == [original.rootDER])
        let verifier = try JWSTestSupport.verifier(roots: roots)
        #expect(await verifier.verifyTransaction(try loaded.signer().sign(JWSTestSupport.transaction())).value != nil)
    }

    @Test func base64URLRoundTripsAndRejectsForeignBytes() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("ab+/") == nil)
        #expect(Base64URL.decode("abc=") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("") == [])
        // One foreign byte anywhere, in the whole quads or the tail, of any length: refused. The decoder checks once
        // at the end, so this is what holds that every byte's check reaches the answer.
        for length in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 31, 32, 33] {
            let encoded = Array(Base64URL.encode((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 91 &+ 3) }).utf8)
            for position in encoded.indices {
                for foreign in [UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="), 0x00, 0x80, 0xFF, UInt8(ascii: ".")] {
                    var altered = encoded
                    altered[position] = foreign
                    #expect(
                        Base64URL.decode(String(decoding: altered, as: UTF8.self)) == nil,
                        "length \(length), byte \(foreign) at \(position)")
                }
            }
        }
    }

    @Test func builtInAppleRootIsG3() throws {
        #expect(AppleRootCertificates.appleRootCAG3 == (try JWSTestSupport.appleRootDER))
        let fingerprint = SHA256.hash(data: AppleRootCertificates.appleRootCAG3).map { String(format: "%02X", $0) }.joined()
        #expect(fingerprint == "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")
    }
}
