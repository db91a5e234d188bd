import AppStore
import Foundation
import TestSupport
import Testing

/// One entry of `Tests/Fixtures/apple-real/manifest.json` or `Tests/Fixtures/test-signed/manifest.json`.
struct AppleVectorEntry: Sendable, CustomTestStringConvertible {
    /// `apple-real` (trust Apple Root CA - G3) or `test-signed` (trust the fixtures' test root).
    let folder: String
    let file: String
    let raw: Data

    var testDescription: String { "\(folder)/\(file)" }

    /// The entry's fields; parsed on use so the entry stays Sendable.
    var fields: [String: Any] {
        (try? JSONSerialization.jsonObject(with: raw) as? [String: Any]) ?? [:]
    }

    var url: URL { Vectors.directory.appendingPathComponent(folder).appendingPathComponent(file) }

    /// The root the entry's chain ends in.
    var rootDER: Data {
        get throws {
            if folder == "test-signed" { return try Vectors.testSignedRootDER }
            return try JWSTestSupport.appleRootDER
        }
    }

    static func all(in folders: [String] = ["apple-real", "test-signed"]) -> [AppleVectorEntry] {
        folders.flatMap { folder -> [AppleVectorEntry] in
            let url = Vectors.directory.appendingPathComponent(folder).appendingPathComponent("manifest.json")
            guard let data = try? Data(contentsOf: url),
                let entries = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
            else { return [] }
            return entries.compactMap { entry in
                guard let file = entry["file"] as? String,
                    let raw = try? JSONSerialization.data(withJSONObject: entry)
                else { return nil }
                return AppleVectorEntry(folder: folder, file: file, raw: raw)
            }
        }
    }
}

/// Real Apple-signed vectors: accepted ones verify with the manifest's fields, rejected ones fail with the
/// code that matches the cause Apple's own library gave. The test-signed vectors (our payloads, a test CA) are held
/// to the same manifest checks against their own root, and neither set verifies under the other's root.
@Suite struct JWSAppleVectorsTests {
    /// Fields of a manifest entry that describe the vector rather than the payload.
    static let metaKeys: Set<String> = [
        "file", "kind", "expected", "environment", "bundleId", "appAppleId", "decoded", "nested", "leafCertificate",
        "verifiedWith", "accepted_by", "rejected_by", "rejection", "source", "sourceCommit", "sourceAtHead", "sha256",
        "note", "why", "tampering", "derived_from", "naive_leaf_key_only_check", "payloadFieldsNotInLibraryModel",
    ]

    @Test func manifestIsFoundAndComplete() throws {
        let real = AppleVectorEntry.all(in: ["apple-real"])
        #expect(real.count >= 13)
        #expect(real.contains { $0.fields["expected"] as? String == "reject" })
        #expect(AppleVectorEntry.all(in: ["test-signed"]).count >= 14)
        // Every vector file is in its manifest, and every manifest entry has its file.
        for folder in ["apple-real", "test-signed"] {
            let files = try FileManager.default.contentsOfDirectory(atPath: Vectors.directory.appendingPathComponent(folder).path)
                .filter { $0.hasSuffix(".jws") }
            #expect(Set(files) == Set(AppleVectorEntry.all(in: [folder]).map(\.file)), "\(folder)")
        }
    }

    /// A test-signed vector does not verify under Apple's root, nor a real Apple one under the test root.
    @Test func eachSetIsRefusedUnderTheOtherRoot() async throws {
        let crossings = [
            (try JWSTestSupport.appleRootDER, try Vectors.testSigned("transaction-consumable-sandbox-1.jws")),
            (try Vectors.testSignedRootDER, try Vectors.appleReal("transaction-consumable-sandbox-1.jws")),
        ]
        for (root, jws) in crossings {
            let verifier = try JWSTestSupport.verifier(roots: [root], bundleId: nil, environment: .sandbox, appAppleId: nil)
            #expect(await verifier.verifyAny(jws).failure?.code == .invalidChain)
        }
    }

    @Test(arguments: AppleVectorEntry.all())
    func vector(_ entry: AppleVectorEntry) async throws {
        let fields = entry.fields
        let environment = AppStoreEnvironment(rawValue: try #require(fields["environment"] as? String))
        let verifier = try JWSTestSupport.verifier(
            roots: [try entry.rootDER],
            bundleId: fields["bundleId"] as? String,
            environment: environment,
            appAppleId: (fields["appAppleId"] as? NSNumber)?.int64Value
        )
        let jws = String(decoding: try Data(contentsOf: entry.url), as: UTF8.self)
        let result = await verifier.verifyAny(jws)

        if fields["expected"] as? String == "reject" {
            let failure = try #require(result.failure, "\(entry.file) must be rejected")
            let cause = ((fields["rejection"] as? [String: Any])?["cause"] as? String) ?? ""
            if let expected = Self.code(forCause: cause) {
                #expect(failure.code == expected, "\(entry.file): \(failure)")
            }
            return
        }

        let verified = try #require(result.value, "\(entry.file): \(String(describing: result.failure))")
        let kind = fields["kind"] as? String
        switch verified {
        case .notification(let notification):
            #expect(kind == "notification")
            #expect(notification.payload.notificationType?.rawValue == fields["notificationType"] as? String)
            #expect(notification.payload.notificationUUID == fields["notificationUUID"] as? String)
            try Self.expectFields(fields, in: notification.json, entry: entry.file, dataKeys: ["bundleVersion", "status"])
            let nested = fields["nested"] as? [String: Any] ?? [:]
            if let expected = nested["signedTransactionInfo"] as? [String: Any] {
                let transaction = try #require(notification.transaction)
                #expect(transaction.payload.transactionId == expected["transactionId"] as? String)
                try Self.expectFields(expected, in: transaction.json, entry: entry.file)
            } else {
                #expect(notification.transaction == nil)
            }
            if let expected = nested["signedRenewalInfo"] as? [String: Any] {
                let renewal = try #require(notification.renewalInfo)
                try Self.expectFields(expected, in: renewal.json, entry: entry.file)
            }
        case .transaction(let document):
            #expect(kind == "transaction")
            #expect(document.payload.transactionId == fields["transactionId"] as? String)
            #expect(document.payload.productId == fields["productId"] as? String)
            #expect(document.payload.type?.rawValue == fields["type"] as? String)
            try Self.expectFields(fields, in: document.json, entry: entry.file)
        case .renewalInfo(let document):
            #expect(kind == "renewal")
            #expect(document.payload.autoRenewProductId == fields["autoRenewProductId"] as? String)
            #expect(document.payload.autoRenewStatus?.rawValue == (fields["autoRenewStatus"] as? NSNumber)?.intValue)
            try Self.expectFields(fields, in: document.json, entry: entry.file)
        case .appTransaction:
            Issue.record("\(entry.file): no app transaction vectors are expected")
        }
    }

    /// Every payload field the manifest lists equals the decoded JSON's value (compared as JSON).
    static func expectFields(_ expected: [String: Any], in json: Data, entry: String, dataKeys: Set<String> = []) throws {
        let decoded = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let data = decoded["data"] as? [String: Any] ?? [:]
        for (key, value) in expected where !metaKeys.contains(key) && key != "verified" {
            let actual = dataKeys.contains(key) ? data[key] : decoded[key]
            #expect(canonical(actual) == canonical(value), "\(entry): \(key)")
        }
    }

    static func canonical(_ value: Any?) -> String {
        guard let value, !(value is NSNull) else { return "null" }
        let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "unencodable"
    }

    /// Maps the cause Apple's Python library reported to Tollgate's code.
    static func code(forCause cause: String) -> FailureCode? {
        if cause.contains("InvalidSignature") { return .invalidSignature }
        if cause.contains("has expired") { return .certificateExpired }
        if cause.contains("self-signed") || cause.contains("signature failure") || cause.contains("local issuer") {
            return .invalidChain
        }
        return nil
    }
}
