import Foundation
import Testing

@testable import AppStore

@Suite struct LegacyLenientDecodingTests {
    @Test func numbersDatesAndFlagsDecodeFromEitherType() throws {
        let json = #"""
            {"status": "21006", "environment": "Production", "is-retryable": 0, "unknown_field": {"x": [1]},
             "receipt": {"bid": "com.example", "transaction_id": 42, "product_id": "coins", "quantity": 3,
                         "purchase_date_ms": 1600000000000, "original_purchase_date": "2020-09-13 12:26:40 Etc/GMT",
                         "expires_date": "1600003600000", "is_trial_period": true, "cancellation_date_ms": "1600000500000",
                         "cancellation_reason": "1"},
             "latest_receipt_info": {"transaction_id": "43", "product_id": "coins", "purchase_date_ms": "1600000100000"},
             "pending_renewal_info": [{"original_transaction_id": 42, "auto_renew_status": "true",
                                       "is_in_billing_retry_period": "1", "grace_period_expires_date_ms": "1600009999000"}]}
            """#
        let response = try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(json.utf8))
        #expect(response.status == 21006)
        #expect(response.environment == .production)
        #expect(response.isRetryable == false)
        let top = try #require(response.receipt?.transaction)
        #expect(top.transactionId == "42")
        #expect(top.quantity == 3)
        #expect(top.purchaseDate == LegacyFixture.millis(1_600_000_000_000))
        #expect(top.originalPurchaseDate == LegacyFixture.millis(1_600_000_000_000))
        #expect(top.expiresDate == LegacyFixture.millis(1_600_003_600_000))
        #expect(top.isTrialPeriod == true)
        #expect(response.latestReceiptInfo.map(\.transactionId) == ["43"])
        let renewal = try #require(response.pendingRenewalInfo.first)
        #expect(renewal.autoRenewStatus == 1)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.gracePeriodExpiresDate == LegacyFixture.millis(1_600_009_999_000))

        let verified = try #require(
            ReceiptNormalizer.normalize(response: response, answeredBy: .production, expectedBundleId: "com.example").value)
        #expect(verified.isSubscriptionExpired)
        #expect(verified.transactions.map(\.transactionId) == ["42", "43"])
        #expect(verified.transactions[0].revocationDate == LegacyFixture.millis(1_600_000_500_000))
        #expect(verified.transactions[0].revocationReason == RevocationReason(rawValue: 1))
        #expect(verified.transactions[0].renewal?.gracePeriodExpiresDate == LegacyFixture.millis(1_600_009_999_000))
    }

    @Test func duplicateKeepsTheRecordedCancellation() {
        var refunded = LegacyTransaction()
        refunded.transactionId = "7"
        refunded.productId = "noads"
        refunded.purchaseDate = LegacyFixture.millis(1_000)
        refunded.cancellationDate = LegacyFixture.millis(2_000)
        var plain = refunded
        plain.cancellationDate = nil
        let transactions = ReceiptNormalizer.transactions(
            purchases: [refunded], latest: [plain], renewals: [], environment: .production)
        #expect(transactions.count == 1)
        #expect(transactions.first?.revocationDate == LegacyFixture.millis(2_000))
    }

    @Test func entriesWithoutIdentifiersAreDropped() {
        var incomplete = LegacyTransaction()
        incomplete.productId = "coins"
        incomplete.purchaseDate = LegacyFixture.millis(1_000)
        let transactions = ReceiptNormalizer.transactions(
            purchases: [incomplete], latest: [], renewals: [], environment: .sandbox)
        #expect(transactions.isEmpty)
    }

    @Test func validStatusWithoutReceiptIsRetryable() throws {
        let response = try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(#"{"status": 0}"#.utf8))
        let result = ReceiptNormalizer.normalize(response: response, answeredBy: .production, expectedBundleId: "com.example")
        guard case .retryable(let failure) = result else {
            Issue.record("expected retryable, got \(result)")
            return
        }
        #expect(failure.code == .appleBadResponse)
    }

    @Test func responseWithoutStatusFailsToDecode() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(#"{"receipt": {}}"#.utf8))
        }
    }

    @Test func receiptDataIsSanitized() throws {
        #expect(try ReceiptData.sanitize(" QUJD /8=\r\n", maximumLength: 100).get() == "QUJD+/8=")
        #expect(try ReceiptData.sanitize("QUJD\n+/8=", maximumLength: 100).get() == "QUJD+/8=")
        // A receipt that starts or ends with `+`, form-decoded: the spaces at its ends are its `+`, not stray.
        #expect(try ReceiptData.sanitize(" QUJD/8 ", maximumLength: 100).get() == "+QUJD/8+")
        #expect(try ReceiptData.sanitize(" QUJ\n", maximumLength: 100).get() == "+QUJ")
        #expect(try ReceiptData.sanitize("QU\tJD\r\n+/8=", maximumLength: 100).get() == "QUJD+/8=")
        #expect(try ReceiptData.sanitize("QUJD+/8=", maximumLength: 100).get() == "QUJD+/8=")
        // Non-ASCII (whole, or next to what is cleaned) is never base64.
        for bad in ["QUJé+/8=", "QUJ\u{00A0}", "QU é/8="] {
            #expect(throws: VerificationFailure.self, "\(bad)") { try ReceiptData.sanitize(bad, maximumLength: 100).get() }
        }
        for bad in ["", "   ", "QUJ", "QU=D+/8=", "QUJD-_8=", "{\"a\":1}", "QUJD+/8=QUJD", "Q===", "QUJD\u{0}/8="] {
            #expect(throws: VerificationFailure.self, "\(bad)") { try ReceiptData.sanitize(bad, maximumLength: 100).get() }
        }
        #expect(throws: VerificationFailure.self) { try ReceiptData.sanitize("QUJDQUJD", maximumLength: 4).get() }
    }
}
