import AppStore
import AppStoreTesting
import Foundation
import HTTPTypes

/// What a change to the ledger needs besides the ledger: the signers, the settings and the time.
struct SimContext: Sendable {
    var signer: JWSSigner
    var receiptSigner: AppReceiptSigner
    var configuration: SimConfiguration
    /// Now, in milliseconds since 1970.
    var now: Int64

    func sign(_ transaction: SimTransaction) throws(SimError) -> String {
        do {
            return try signer.sign(transaction.payload(signedDate: now))
        } catch {
            throw SimError(.internalServerError, "signing_failed", "the transaction could not be signed")
        }
    }

    func sign(_ subscription: SimSubscription, latest: SimTransaction) throws(SimError) -> String {
        do {
            return try signer.sign(subscription.renewalInfo(latest: latest, signedDate: now))
        } catch {
            throw SimError(.internalServerError, "signing_failed", "the renewal info could not be signed")
        }
    }

    /// The app receipt of `receipt` as the App Store hands it to the app now: base64 PKCS#7 listing every
    /// transaction of its purchases (renewals included), the receipt's token as the opaque value.
    func appReceipt(_ receipt: SimReceipt, in ledger: SimLedger) throws(SimError) -> String {
        let purchases = receipt.originalTransactionIds
            .flatMap { ledger.chains[$0] ?? [] }
            .compactMap { ledger.transactions[$0] }
            .map { transaction in
                AppReceiptPurchase(
                    quantity: transaction.quantity, productId: transaction.productId, transactionId: transaction.transactionId,
                    originalTransactionId: transaction.originalTransactionId,
                    purchaseDate: Date(millisecondsSince1970: transaction.purchaseDate),
                    expiresDate: transaction.expiresDate.map(Date.init(millisecondsSince1970:)))
            }
        let content = AppReceipt(
            receiptType: receipt.environment == .sandbox ? "ProductionSandbox" : "Production", bundleId: receipt.bundleId,
            applicationVersion: "1", opaqueValue: Data(base64Encoded: receipt.token).map(Array.init),
            creationDate: Date(millisecondsSince1970: now), purchases: purchases)
        do {
            return Data(try receiptSigner.sign(content)).base64EncodedString()
        } catch {
            throw SimError(.internalServerError, "signing_failed", "the receipt could not be signed")
        }
    }
}

extension Date {
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
