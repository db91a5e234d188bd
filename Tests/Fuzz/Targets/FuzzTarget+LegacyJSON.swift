import AppStore
import Foundation

extension FuzzTarget {
    /// AppStore's lenient readers of Apple's legacy JSON (`LegacyFields` over Core's `JSONReader`): the input as a
    /// `verifyReceipt` answer (`VerifyReceiptResponse.read`, then `ReceiptNormalizer`, as the verifier reads Apple's
    /// answer) and as a V1 notification (`ServerNotificationV1.read`, then its receipt through `ReceiptData`). The
    /// bytes read through `JSONDecoder` (the models' `init(from:)`) give the same model, when both read them (they
    /// part on what `JSONReader` refuses and Foundation takes, such as a key given twice); normalized transactions are
    /// one per ID, in purchase-date order.
    static let legacyJSON = FuzzTarget(
        name: "LegacyJSON", maxLength: 65536,
        summary: "AppStore VerifyReceiptResponse/ServerNotificationV1: read agrees with JSONDecoder; normalize invariants"
    ) { bytes throws(FuzzFailure) in
        if let response = try? VerifyReceiptResponse.read(bytes) {
            if let decoded = try? JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(bytes)) {
                try expect(decoded == response, "VerifyReceiptResponse: read and JSONDecoder disagree")
            }
            let bundleId = response.receipt?.effectiveBundleId ?? "com.example.app"
            let result = ReceiptNormalizer.normalize(response: response, answeredBy: .production, expectedBundleId: bundleId)
            if let receipt = result.value {
                let ids = receipt.transactions.map(\.transactionId)
                try expect(Set(ids).count == ids.count, "a transaction ID is listed twice")
                let order = receipt.transactions.map { ($0.purchaseDate, $0.transactionId) }
                try expect(zip(order, order.dropFirst()).allSatisfy { $0 <= $1 }, "transactions out of order")
            }
        }
        if let notification = try? ServerNotificationV1.read(bytes) {
            if let decoded = try? JSONDecoder().decode(ServerNotificationV1.self, from: Data(bytes)) {
                try expect(decoded == notification, "ServerNotificationV1: read and JSONDecoder disagree")
            }
            if let latest = notification.latestReceipt, case .success(let receipt) = ReceiptData.sanitize(latest, maximumLength: 1 << 20) {
                try expect(!receipt.isEmpty, "an empty receipt passed sanitize")
                try expect(Data(base64Encoded: receipt) != nil, "a sanitized receipt is not base64")
            }
        }
    }
}
