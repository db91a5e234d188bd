import AppStore
import AppStoreTesting
import Foundation
import Pipeline
import TestSupport
import Testing

@testable import Verification

/// Receipts without `verifyReceipt` (`TOLLGATE_RECEIPT_VALIDATION=server-api` and `auto`), against a real
/// redis-server and the real `appstore-sim`, whose purchases hand out PKCS#7 app receipts signed by its CA.
@Suite(.serialized)
struct VerifierServerAPIReceiptTests {
    /// The settings of a deployment whose `verifyReceipt` is gone: its URLs lead nowhere.
    static func withoutVerifyReceipt(_ harness: VerifierHarness, mode: String = "server-api") throws -> [String: String] {
        var settings = try harness.apiSettings()
        settings["TOLLGATE_RECEIPT_VALIDATION"] = mode
        settings["TOLLGATE_VERIFY_RECEIPT_URL"] = "http://127.0.0.1:1/verifyReceipt"
        settings["TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL"] = "http://127.0.0.1:1/sandbox/verifyReceipt"
        return settings
    }

    /// The simulator's own signing authority (its CA directory), to sign receipts only Apple could sign.
    static func simAuthority(_ harness: VerifierHarness) throws -> TestCertificateAuthority {
        try TestCertificateAuthority(directory: harness.sim.directory.appendingPathComponent("ca"))
    }

    /// The content of a base64 app receipt.
    static func appReceipt(_ text: Any?) throws -> AppReceipt {
        let base64 = try #require(text as? String)
        return try AppReceiptParser.parse(Array(try #require(Data(base64Encoded: base64))))
    }

    /// A consumable and a subscription on one receipt, the subscription renewed and its renewal turned off: the
    /// receipt is fulfilled with `verifyReceipt` unreachable, from Apple's signed history and renewal state.
    @Test func aReceiptIsFulfilledWithVerifyReceiptUnreachable() async throws {
        try await VerifierHarness.with { harness in
            let coins = try await harness.sim.purchase(["quantity": 3])
            let first = try #require(coins["receipt"] as? String)
            let vip = try await harness.sim.purchase([
                "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "receipt": first,
            ])
            let receipt = try #require(vip["receipt"] as? String)
            let vipId = try #require(vip["transactionId"] as? String)
            let renewed = try await harness.sim.post("/sim/events", ["type": "DID_RENEW", "transactionId": vipId])
            let renewalId = try #require(renewed["transactionId"] as? String)
            try await harness.sim.post(
                "/sim/events", ["type": "DID_CHANGE_RENEWAL_STATUS", "transactionId": vipId, "subtype": "AUTO_RENEW_DISABLED"])
            try await harness.withVerifier(try Self.withoutVerifyReceipt(harness)) { _ in
                let jobID = try await harness.enqueue(kind: .receipt, payload: receipt, user: "alice")
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.jobId == jobID)
                #expect(event.userId == "alice")
                #expect(event.environment == "Production")
                let byId = Dictionary(uniqueKeysWithValues: event.transactions.map { ($0.transactionId, $0) })
                let coinsId = try #require(coins["transactionId"] as? String)
                #expect(Set(byId.keys) == [coinsId, vipId, renewalId])
                #expect(byId[coinsId]?.quantity == 3)
                // Fields only Apple's signed transactions carry (verifyReceipt has no product type or price).
                #expect(byId[vipId]?.productType == "Auto-Renewable Subscription")
                #expect(byId[renewalId]?.originalTransactionId == vipId)
                let renewal = try #require(event.renewals.first)
                #expect(event.renewals.count == 1)
                #expect(renewal.originalTransactionId == vipId)
                #expect(renewal.autoRenewStatus == 0)
            }
            #expect(try await harness.sim.requestCount("verifyReceipt.production") == 0)
            #expect(try await harness.sim.requestCount("api.production") >= 2)
        }
    }

    /// An older receipt names only its own purchases: Apple's history of the customer holds the later ones too,
    /// and they are not taken from it (an earlier backend may have credited a customer's old consumables).
    @Test func aReceiptYieldsOnlyThePurchasesItNames() async throws {
        try await VerifierHarness.with { harness in
            let coins = try await harness.sim.purchase()
            let more = try await harness.sim.purchase(["productId": "com.example.coins500", "receipt": try #require(coins["receipt"])])
            let older = try #require(more["receipt"] as? String)
            let later = try await harness.sim.purchase(["receipt": older])
            try await harness.withVerifier(try Self.withoutVerifyReceipt(harness)) { _ in
                try await harness.enqueue(kind: .receipt, payload: older)
                let event = try #require(try await harness.waitForEvents(1).first)
                let named = [try #require(coins["transactionId"] as? String), try #require(more["transactionId"] as? String)]
                #expect(event.transactions.map(\.transactionId).sorted() == named.sorted())
                #expect(!event.transactions.contains { $0.transactionId == later["transactionId"] as? String })
            }
        }
    }

    /// What an attacker can send instead of a receipt Apple signed: each is refused before Apple is asked, and
    /// nothing reaches the fulfiller.
    @Test func receiptsAppleDidNotSignAreRefused() async throws {
        try await VerifierHarness.with { harness in
            let victim = try await harness.sim.purchase(["quantity": 5])
            let genuine = try Self.appReceipt(victim["receipt"])
            let stranger = try TestCertificateAuthority()
            let sim = try Self.simAuthority(harness)
            var otherApp = genuine
            otherApp.bundleId = "com.example.other"
            var xcode = genuine
            xcode.receiptType = "Xcode"
            let cases: [(String, String)] = [
                // The victim's receipt re-signed by an authority shaped like Apple's: names the victim's purchase.
                (Data(try stranger.receiptSigner().sign(genuine)).base64EncodedString(), "receipt_not_authentic"),
                (AppleLibraryReceipts.xcodeWithTransaction, "receipt_not_authentic"),
                (Data("not a receipt at all".utf8).base64EncodedString(), "receipt_malformed"),
                (Data(try sim.receiptSigner().sign(otherApp)).base64EncodedString(), "wrong_bundle_id"),
                (Data(try sim.receiptSigner().sign(xcode)).base64EncodedString(), "wrong_environment"),
                (AppleLibraryReceipts.legacyTransaction, "receipt_unsupported"),
                // The certificate bomb (issue 29): 56 certificates cross-signing each other around the victim's receipt.
                (Data(try CrossSignedReceipt.make(keys: 8, receipt: genuine)).base64EncodedString(), "receipt_too_many_certificates"),
            ]
            try await harness.withVerifier(try Self.withoutVerifyReceipt(harness)) { _ in
                for (payload, reason) in cases {
                    let job = try await harness.enqueue(kind: .receipt, payload: payload, user: "mallory")
                    let status = try await harness.waitForStatus(job) { $0["state"] == "rejected" }
                    #expect(status["reason"] == reason, "\(status)")
                }
            }
            #expect(try await harness.events().isEmpty)
            #expect(try await harness.sim.requestCount("api.production") == 0, "Apple was asked about a receipt Apple did not sign")
        }
    }

    /// Issue 29 item 7: a job's status tells the app a stable code and its sentence; what the library said (here
    /// SwiftASN1's "excessive stack depth" for BER nested 4,000 deep, with its source file) is for the log only.
    @Test func aRejectionTellsTheAppACodeAndASentenceNotLibraryInternals() async throws {
        try await VerifierHarness.with { harness in
            let nested = Data([UInt8](repeating: 0, count: 8000).enumerated().map { $0.offset % 2 == 0 ? 0x30 : 0x80 })
            try await harness.withVerifier(try Self.withoutVerifyReceipt(harness)) { _ in
                let job = try await harness.enqueue(kind: .receipt, payload: nested.base64EncodedString(), user: "mallory")
                let status = try await harness.waitForStatus(job) { $0["state"] == "rejected" }
                #expect(status["reason"] == "receipt_malformed")
                #expect(status["message"] == FailureCode.receiptMalformed.sentence)
                let message = status["message"] ?? ""
                #expect(!message.contains("ASN1") && !message.contains(".swift") && !message.contains("stack"), "\(message)")
            }
        }
    }

    /// `auto`: a receipt Tollgate cannot prove goes to `verifyReceipt`, where Apple decides. The victim's receipt
    /// re-signed by a stranger (its token, the simulator's identity for it, intact) is refused there too.
    @Test func autoSendsWhatItCannotProveToVerifyReceipt() async throws {
        try await VerifierHarness.with { harness in
            let victim = try await harness.sim.purchase()
            let genuineText = try #require(victim["receipt"] as? String)
            let genuine = try Self.appReceipt(genuineText)
            let forged = Data(try TestCertificateAuthority().receiptSigner().sign(genuine)).base64EncodedString()
            var settings = try harness.apiSettings()
            settings["TOLLGATE_RECEIPT_VALIDATION"] = "auto"
            try await harness.withVerifier(settings) { _ in
                let refused = try await harness.enqueue(kind: .receipt, payload: forged, user: "mallory")
                let status = try await harness.waitForStatus(refused) { $0["state"] == "rejected" }
                #expect(status["reason"] == "receipt_not_authentic", "\(status)")
                #expect(try await harness.sim.requestCount("verifyReceipt.production") == 1)
                #expect(try await harness.sim.requestCount("api.production") == 0)

                // A receipt carrying more certificates than Apple's ever do is refused here, not sent to Apple.
                let bomb = Data(try CrossSignedReceipt.make(keys: 8, receipt: genuine)).base64EncodedString()
                let crafted = try await harness.enqueue(kind: .receipt, payload: bomb, user: "mallory")
                let craftedStatus = try await harness.waitForStatus(crafted) { $0["state"] == "rejected" }
                #expect(craftedStatus["reason"] == "receipt_too_many_certificates", "\(craftedStatus)")
                #expect(try await harness.sim.requestCount("verifyReceipt.production") == 1)

                // The genuine receipt goes to the Server API, not verifyReceipt.
                try await harness.enqueue(kind: .receipt, payload: genuineText, user: "alice")
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.userId == "alice")
                #expect(try await harness.sim.requestCount("verifyReceipt.production") == 1)
                #expect(try await harness.sim.requestCount("api.production") >= 1)
            }
        }
    }

    /// Apple's answer decides: history refusing the transaction (not found) rejects the receipt; a 503 retries it.
    @Test func applesErrorsAreTheReceiptsOutcome() async throws {
        try await VerifierHarness.with { harness in
            let purchase = try await harness.sim.purchase()
            let receipt = try #require(purchase["receipt"] as? String)
            try await harness.sim.post("/sim/faults", ["target": "api", "status": 503, "times": 1])
            try await harness.withVerifier(try Self.withoutVerifyReceipt(harness)) { _ in
                let retried = try await harness.enqueue(kind: .receipt, payload: receipt)
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.jobId == retried)
                // The 503 answered the first history call; the event came from the retry's.
                #expect(try await harness.sim.requestCount("api.production") == 2)

                try await harness.sim.post("/sim/faults", ["target": "api", "status": 404, "errorCode": 4_040_010, "times": 1])
                let missing = try await harness.enqueue(kind: .receipt, payload: receipt, user: "bob")
                let status = try await harness.waitForStatus(missing) { $0["state"] == "rejected" }
                #expect(status["reason"] == "api_not_found", "\(status)")
            }
        }
    }
}
