import Core
package import Foundation

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

    /// The decoded JSON, laid out for people with sorted keys (``Core/JSONWriter/prettyPrinted(_:)``). In a
    /// notification, `data.signedTransactionInfo`, `data.signedRenewalInfo` and `appData.signedAppTransactionInfo`
    /// are replaced in place by their decoded JSON objects.
    package func decodedJSON() throws -> Data {
        let value: JSONValue
        switch self {
        case .transaction(let document): value = try Self.read(document.json)
        case .renewalInfo(let document): value = try Self.read(document.json)
        case .appTransaction(let document): value = try Self.read(document.json)
        case .notification(let notification):
            guard case .object(var root) = try Self.read(notification.json) else {
                value = try Self.read(notification.json)
                break
            }
            if case .object(var data)? = root["data"] {
                if let transaction = notification.transaction {
                    data["signedTransactionInfo"] = try Self.read(transaction.json)
                }
                if let renewal = notification.renewalInfo {
                    data["signedRenewalInfo"] = try Self.read(renewal.json)
                }
                root["data"] = .object(data)
            }
            if case .object(var appData)? = root["appData"], let app = notification.appTransaction {
                appData["signedAppTransactionInfo"] = try Self.read(app.json)
                root["appData"] = .object(appData)
            }
            value = .object(root)
        }
        return Data(JSONWriter.prettyPrinted(value))
    }

    private static func read(_ json: Data) throws(JSONError) -> JSONValue {
        try JSONReader.parse(Array(json))
    }
}
