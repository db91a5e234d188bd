import AppStore
import Foundation
import Pipeline
import Testing

@testable import Verification

/// The offer a purchase was made with reaches the ledger whatever the source: Apple's `offerType`,
/// `offerIdentifier` and `offerDiscountType` from a signed transaction, and the same read from a `verifyReceipt`
/// answer's `is_trial_period`, `is_in_intro_offer_period`, `promotional_offer_id` and `offer_code_ref_name` — a user
/// must not escape the offer rules by submitting a receipt instead of a signed transaction.
@Suite struct PurchaseEventOfferTests {
    @Test func aSignedTransactionCarriesApplesOfferFields() throws {
        let payload = JWSTransactionDecodedPayload(
            originalTransactionId: "o1", transactionId: "t1", productId: "vip.month", purchaseDate: 1_700_000_000_000,
            offerType: .promotionalOffer, offerIdentifier: "winback50")
        var trial = payload
        trial.offerType = .introductoryOffer
        trial.offerIdentifier = nil
        trial.offerDiscountType = .freeTrial
        let promotional = try #require(PurchaseEventTransaction(signed: payload))
        #expect(promotional.offerType == 2 && promotional.offerIdentifier == "winback50" && promotional.offerDiscountType == nil)
        let introductory = try #require(PurchaseEventTransaction(signed: trial))
        #expect(introductory.offerType == 1 && introductory.offerIdentifier == nil && introductory.offerDiscountType == "FREE_TRIAL")
    }

    @Test(
        arguments: [
            (#""is_trial_period": "true""#, 1, nil, "FREE_TRIAL"),
            (#""is_in_intro_offer_period": "true""#, 1, nil, nil),
            (#""promotional_offer_id": "winback50""#, 2, "winback50", nil),
            (#""promotional_offer_id": "free1m", "is_trial_period": "true""#, 2, "free1m", "FREE_TRIAL"),
            (#""offer_code_ref_name": "SPRING""#, 3, "SPRING", nil),
            (#""is_trial_period": "false""#, nil, nil, nil),
        ] as [(String, Int?, String?, String?)])
    func aReceiptTransactionCarriesTheSameOffer(fields: String, type: Int?, identifier: String?, discount: String?) throws {
        let json = """
            {"transaction_id": "t1", "original_transaction_id": "o1", "product_id": "vip.month",
             "purchase_date_ms": "1700000000000", "expires_date_ms": "1702592000000", \(fields)}
            """
        let legacy = try JSONDecoder().decode(LegacyTransaction.self, from: Data(json.utf8))
        let receipt = try #require(ReceiptTransaction(legacy, environment: .sandbox))
        let transaction = PurchaseEventTransaction(receipt: receipt)
        #expect(transaction.offerType == type)
        #expect(transaction.offerIdentifier == identifier)
        #expect(transaction.offerDiscountType == discount)
    }
}
