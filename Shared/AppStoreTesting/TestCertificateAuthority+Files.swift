import AppStore
@preconcurrency import Crypto
package import Foundation
import SwiftASN1
import X509

extension TestCertificateAuthority {
    /// File names in an authority directory (`appstore-sim --ca-dir`): certificates as DER and PEM, keys
    /// as PKCS#8 PEM.
    package enum FileName {
        package static let rootCertificate = "root.der"
        package static let rootCertificatePEM = "root.pem"
        package static let rootKey = "root-key.pem"
        package static let intermediateCertificate = "intermediate.der"
        package static let intermediateKey = "intermediate-key.pem"
        package static let leafCertificate = "leaf.der"
        package static let leafKey = "leaf-key.pem"
    }

    /// Writes the authority's certificates and keys into `directory` (created if missing). Key files
    /// are written readable by the owner only.
    package func write(to directory: URL) throws {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        func put(_ name: String, _ data: Data, secret: Bool = false) throws {
            let url = directory.appendingPathComponent(name)
            try data.write(to: url, options: .atomic)
            if secret { try fileManager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path) }
        }
        try put(FileName.rootCertificate, rootDER)
        try put(FileName.rootCertificatePEM, Data(try root.serializeAsPEM().pemString.utf8))
        try put(FileName.intermediateCertificate, intermediateDER)
        try put(FileName.leafCertificate, leafDER)
        try put(FileName.rootKey, Data(rootKey.pemRepresentation.utf8), secret: true)
        try put(FileName.intermediateKey, Data(intermediateKey.pemRepresentation.utf8), secret: true)
        try put(FileName.leafKey, Data(leafKey.pemRepresentation.utf8), secret: true)
    }

    /// Reads an authority written by `write(to:)`.
    package init(directory: URL) throws {
        func read(_ name: String) throws -> Data {
            try Data(contentsOf: directory.appendingPathComponent(name))
        }
        func text(_ name: String) throws -> String {
            String(decoding: try read(name), as: UTF8.self)
        }
        try self.init(
            rootKey: try P384.Signing.PrivateKey(pemRepresentation: try text(FileName.rootKey)),
            root: try Certificate(derEncoded: Array(try read(FileName.rootCertificate))),
            intermediateKey: try P384.Signing.PrivateKey(pemRepresentation: try text(FileName.intermediateKey)),
            intermediate: try Certificate(derEncoded: Array(try read(FileName.intermediateCertificate))),
            leafKey: try P256.Signing.PrivateKey(pemRepresentation: try text(FileName.leafKey)),
            leaf: try Certificate(derEncoded: Array(try read(FileName.leafCertificate)))
        )
    }

    /// Reads the authority in `directory` if there is one, else generates one and writes it there.
    package static func loadOrCreate(directory: URL, options: Options = Options()) throws -> TestCertificateAuthority {
        let rootPath = directory.appendingPathComponent(FileName.rootCertificate).path
        if FileManager.default.fileExists(atPath: rootPath) {
            return try TestCertificateAuthority(directory: directory)
        }
        let authority = try TestCertificateAuthority(options: options)
        try authority.write(to: directory)
        return authority
    }
}
