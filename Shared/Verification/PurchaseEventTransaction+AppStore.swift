import AppStore
import Foundation
import Pipeline

extension PurchaseEventTransaction {
    /// The canonical form of a receipt transaction (`verifyReceipt`, V1 `unified_receipt`).
    init(receipt transaction: ReceiptTransaction) {
        let offer = Self.offer(of: transaction)
        self.init(
            transactionId: transaction.transactionId,
            originalTransactionId: transaction.originalTransactionId,
            productId: transaction.productId,
            productType: nil,
            quantity: max(1, transaction.quantity),
            purchaseDate: transaction.purchaseDate.millisecondsSince1970,
            originalPurchaseDate: transaction.originalPurchaseDate?.millisecondsSince1970,
            expiresDate: transaction.expiresDate?.millisecondsSince1970,
            revocationDate: transaction.revocationDate?.millisecondsSince1970,
            revocationReason: transaction.revocationReason?.rawValue,
            inAppOwnershipType: transaction.inAppOwnershipType?.rawValue,
            appAccountToken: transaction.appAccountToken,
            webOrderLineItemId: transaction.webOrderLineItemId,
            signedDate: nil,
            isUpgraded: transaction.isUpgraded,
            offerType: offer.type,
            offerIdentifier: offer.identifier,
            offerDiscountType: offer.discount
        )
    }

    /// A receipt period's offer in the signed transaction's terms: a `promotional_offer_id` is a promotional offer
    /// (`2`), an `offer_code_ref_name` an offer code (`3`), else a trial or introductory price period an
    /// introductory offer (`1`); `FREE_TRIAL` whenever Apple marks the period a free trial. Receipts do not say which
    /// paid introductory mode (pay as you go, pay up front) it was.
    private static func offer(of transaction: ReceiptTransaction) -> (type: Int?, identifier: String?, discount: String?) {
        let discount = transaction.isTrialPeriod ? OfferDiscountType.freeTrial.rawValue : nil
        if let id = transaction.promotionalOfferId, !id.isEmpty {
            return (OfferType.promotionalOffer.rawValue, id, discount)
        }
        if let name = transaction.offerCodeRefName, !name.isEmpty { return (OfferType.offerCode.rawValue, name, discount) }
        if transaction.isTrialPeriod || transaction.isInIntroOfferPeriod {
            return (OfferType.introductoryOffer.rawValue, nil, discount)
        }
        return (nil, nil, nil)
    }

    /// The canonical form of a verified StoreKit 2 transaction; `nil` when Apple's payload lacks a
    /// transaction ID, product ID or purchase date (nothing could be credited for it).
    init?(signed payload: JWSTransactionDecodedPayload) {
        guard let transactionId = payload.transactionId, !transactionId.isEmpty,
            let productId = payload.productId, !productId.isEmpty,
            let purchaseDate = payload.purchaseDate
        else { return nil }
        self.init(
            transactionId: transactionId,
            originalTransactionId: payload.originalTransactionId ?? transactionId,
            productId: productId,
            productType: payload.type?.rawValue,
            quantity: max(1, payload.quantity ?? 1),
            purchaseDate: purchaseDate,
            originalPurchaseDate: payload.originalPurchaseDate,
            expiresDate: payload.expiresDate,
            revocationDate: payload.revocationDate,
            revocationReason: payload.revocationReason?.rawValue,
            inAppOwnershipType: payload.inAppOwnershipType?.rawValue,
            appAccountToken: payload.appAccountToken,
            webOrderLineItemId: payload.webOrderLineItemId,
            signedDate: payload.signedDate,
            isUpgraded: payload.isUpgraded,
            offerType: payload.offerType?.rawValue,
            revocationType: payload.revocationType?.rawValue,
            revocationPercentage: payload.revocationPercentage,
            price: payload.price,
            currency: payload.currency,
            appTransactionId: payload.appTransactionId,
            offerIdentifier: payload.offerIdentifier,
            offerDiscountType: payload.offerDiscountType?.rawValue,
            storefront: payload.storefront
        )
    }
}

extension PurchaseEventRenewal {
    /// The canonical form of a receipt's `pending_renewal_info` entry.
    init(receipt state: ReceiptRenewalState) {
        self.init(
            originalTransactionId: state.originalTransactionId,
            productId: state.productId,
            autoRenewStatus: state.autoRenewStatus?.rawValue,
            autoRenewProductId: state.autoRenewProductId,
            expirationIntent: state.expirationIntent?.rawValue,
            isInBillingRetryPeriod: state.isInBillingRetryPeriod,
            gracePeriodExpiresDate: state.gracePeriodExpiresDate?.millisecondsSince1970
        )
    }

    /// The canonical form of verified renewal info; `nil` without an original transaction ID.
    init?(signed payload: JWSRenewalInfoDecodedPayload) {
        guard let original = payload.originalTransactionId, !original.isEmpty else { return nil }
        self.init(
            originalTransactionId: original,
            productId: payload.productId,
            autoRenewStatus: payload.autoRenewStatus?.rawValue,
            autoRenewProductId: payload.autoRenewProductId,
            expirationIntent: payload.expirationIntent?.rawValue,
            isInBillingRetryPeriod: payload.isInBillingRetryPeriod,
            gracePeriodExpiresDate: payload.gracePeriodExpiresDate,
            signedDate: payload.signedDate,
            eligibleWinBackOfferIds: payload.eligibleWinBackOfferIds
        )
    }
}

extension Date {
    /// Whole milliseconds since 1970.
    var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }
}
