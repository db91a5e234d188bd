import AppStore
import Foundation
import Testing

/// One entry of `../shared/vectors/apple-real/manifest.json`.
struct AppleVectorEntry: Sendable, CustomTestStringConvertible {
    let file: String
    let raw: Data

    var testDescription: String { file }

    /// The entry's fields; parsed on use so the entry stays Sendable.
    var fields: [String: Any] {
        (try? JSONSerialization.jsonObject(with: raw) as? [String: Any]) ?? [:]
    }

    static func all() -> [AppleVectorEntry] {
        let url = JWSTestSupport.appleVectors.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: url),
            let entries = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { return [] }
        return entries.compactMap { entry in
            guard let file = entry["file"] as? String,
                let raw = try? JSONSerialization.data(withJSONObject: entry)
            else { return nil }
            return AppleVectorEntry(file: file, raw: raw)
        }
    }
}

/// Real Apple-signed vectors: accepted ones verify with the manifest's fields, rejected ones fail with the
/// code that matches the cause Apple's own library gave.
@Suite struct JWSAppleVectorsTests {
    /// Fields of a manifest entry that describe the vector rather than the payload.
    static let metaKeys: Set<String> = [
        "file", "kind", "expected", "environment", "bundleId", "appAppleId", "decoded", "nested", "leafCertificate",
        "verifiedWith", "accepted_by", "rejected_by", "rejection", "source", "sourceCommit", "sourceAtHead", "sha256",
        "note", "why", "tampering", "derived_from", "naive_leaf_key_only_check", "payloadFieldsNotInLibraryModel",
    ]

    @Test func manifestIsFoundAndComplete() {
        let entries = AppleVectorEntry.all()
        #expect(entries.count >= 31)
        #expect(entries.contains { $0.fields["expected"] as? String == "reject" })
    }

    @Test(arguments: AppleVectorEntry.all())
    func vector(_ entry: AppleVectorEntry) async throws {
        let fields = entry.fields
        let environment = AppStoreEnvironment(rawValue: try #require(fields["environment"] as? String))
        let verifier = try JWSTestSupport.verifier(
            roots: [try JWSTestSupport.appleRootDER],
            bundleId: fields["bundleId"] as? String,
            environment: environment,
            appAppleId: (fields["appAppleId"] as? NSNumber)?.int64Value
        )
        let jws = try JWSTestSupport.vector(entry.file)
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
