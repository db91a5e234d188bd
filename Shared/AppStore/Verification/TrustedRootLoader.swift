package import Foundation
import SwiftASN1
import X509

/// Reads trusted root certificates from files (DER or PEM), for `TOLLGATE_ROOT_CERTS` and
/// `tollctl verify --root`.
package enum TrustedRootLoader {
    /// The DER bytes of every certificate in the file at `path` (one DER certificate, or one or more
    /// PEM blocks).
    package static func load(path: String) throws(SignedDataVerifierConfigurationError) -> [Data] {
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw SignedDataVerifierConfigurationError(message: "cannot read root certificate file \(path)")
        }
        if let text = String(data: contents, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
            guard let documents = try? PEMDocument.parseMultiple(pemString: text) else {
                throw SignedDataVerifierConfigurationError(message: "\(path) holds no readable PEM certificate")
            }
            var ders: [Data] = []
            for document in documents where document.discriminator == "CERTIFICATE" {
                guard (try? Certificate(derEncoded: document.derBytes)) != nil else {
                    throw SignedDataVerifierConfigurationError(message: "\(path): a PEM block is not a certificate")
                }
                ders.append(Data(document.derBytes))
            }
            return ders
        }
        guard (try? Certificate(derEncoded: Array(contents))) != nil else {
            throw SignedDataVerifierConfigurationError(message: "\(path) is neither a DER nor a PEM certificate")
        }
        return [contents]
    }

    /// The certificates of every file in a comma-separated list of paths (`TOLLGATE_ROOT_CERTS`); at least one.
    package static func load(list: String) throws(SignedDataVerifierConfigurationError) -> [Data] {
        var roots: [Data] = []
        for path in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !path.isEmpty {
            roots += try load(path: path)
        }
        guard !roots.isEmpty else { throw SignedDataVerifierConfigurationError(message: "names no certificate file") }
        return roots
    }
}
