package import Foundation

/// The test vectors in `Tests/Fixtures` (provenance and licences in its README): data Apple signed (`apple-real`, with
/// its `manifest.json`), vectors of our own signed by a test CA (`test-signed`, same manifest format, made by
/// `scripts/make-test-vectors`) and the legacy `verifyReceipt`/V1 fixtures (`legacy`).
package enum Vectors {
    /// The repository root (found from this file's path, so any checkout works).
    package static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    package static let directory = repositoryRoot.appendingPathComponent("Tests/Fixtures")
    package static let appleReal = directory.appendingPathComponent("apple-real")
    package static let testSigned = directory.appendingPathComponent("test-signed")
    package static let legacy = directory.appendingPathComponent("legacy")

    /// The trimmed text of `apple-real/<name>`.
    package static func appleReal(_ name: String) throws -> String {
        try String(contentsOf: appleReal.appendingPathComponent(name), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The trimmed text of `test-signed/<name>`.
    package static func testSigned(_ name: String) throws -> String {
        try String(contentsOf: testSigned.appendingPathComponent(name), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The root certificate (DER) the `test-signed` vectors chain to.
    package static var testSignedRootDER: Data {
        get throws { try Data(contentsOf: testSigned.appendingPathComponent("test-root-ca.der")) }
    }

    /// Every `.jws` file of `apple-real` and `test-signed` whose name has `prefix`, as (name, trimmed text), sorted.
    package static func allJWS(prefix: String = "") throws -> [(name: String, jws: String)] {
        try [appleReal, testSigned].flatMap { folder in
            try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".jws") }.sorted()
                .map { name -> (name: String, jws: String) in
                    let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                    return (name: "\(folder.lastPathComponent)/\(name)", jws: text.trimmingCharacters(in: .whitespacesAndNewlines))
                }
        }
    }
}
