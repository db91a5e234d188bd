import Foundation

/// The body of Apple's `verifyReceipt`.
struct VerifyReceiptRequest: Decodable, Sendable {
    var receiptData: String?
    var password: String?
    var excludeOldTransactions: Bool?

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt-data"
        case password
        case excludeOldTransactions = "exclude-old-transactions"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        receiptData = try? container.decodeIfPresent(String.self, forKey: .receiptData)
        password = try? container.decodeIfPresent(String.self, forKey: .password)
        excludeOldTransactions =
            (try? container.decodeIfPresent(Bool.self, forKey: .excludeOldTransactions))
            ?? (try? container.decodeIfPresent(String.self, forKey: .excludeOldTransactions)).map { $0 == "true" }
    }
}
