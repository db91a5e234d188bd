import Foundation

/// Any kind of App Store signed data, verified; what `SignedDataVerifier.verifyAny` returns.
package enum VerifiedSignedData: Sendable {
    case notification(VerifiedNotification)
    case transaction(VerifiedDocument<JWSTransactionDecodedPayload>)
    case renewalInfo(VerifiedDocument<JWSRenewalInfoDecodedPayload>)
    case appTransaction(VerifiedDocument<AppTransaction>)

    /// `notification`, `transaction`, `renewalInfo` or `appTransaction`.
    package var kind: String {
        switch self {
        case .notification: return "notification"
        case .transaction: return "transaction"
        case .renewalInfo: return "renewalInfo"
        case .appTransaction: return "appTransaction"
        }
    }

    /// The decoded JSON, pretty-printed with sorted keys. In a notification, `data.signedTransactionInfo`,
    /// `data.signedRenewalInfo` and `appData.signedAppTransactionInfo` are replaced in place by their decoded
    /// JSON objects.
    package func decodedJSON() throws -> Data {
        let object: Any
        switch self {
        case .transaction(let document): object = try JSONSerialization.jsonObject(with: document.json)
        case .renewalInfo(let document): object = try JSONSerialization.jsonObject(with: document.json)
        case .appTransaction(let document): object = try JSONSerialization.jsonObject(with: document.json)
        case .notification(let notification):
            guard var root = try JSONSerialization.jsonObject(with: notification.json) as? [String: Any] else {
                object = try JSONSerialization.jsonObject(with: notification.json)
                break
            }
            if var data = root["data"] as? [String: Any] {
                if let transaction = notification.transaction {
                    data["signedTransactionInfo"] = try JSONSerialization.jsonObject(with: transaction.json)
                }
                if let renewal = notification.renewalInfo {
                    data["signedRenewalInfo"] = try JSONSerialization.jsonObject(with: renewal.json)
                }
                root["data"] = data
            }
            if var appData = root["appData"] as? [String: Any], let app = notification.appTransaction {
                appData["signedAppTransactionInfo"] = try JSONSerialization.jsonObject(with: app.json)
                root["appData"] = appData
            }
            object = root
        }
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }
}
