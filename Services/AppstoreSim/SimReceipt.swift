import AppStore
import Foundation

/// A receipt the simulator issued: one customer's purchases in one app and environment. The base64
/// string handed out is ``SimReceiptToken``; it carries no data, only a reference to this record, so a
/// receipt always shows the current state of its purchases.
struct SimReceipt: Sendable, Hashable {
    var token: String
    var environment: AppStoreEnvironment
    var bundleId: String
    var creationDate: Int64
    /// The purchases on this receipt, by original transaction ID, oldest first.
    var originalTransactionIds: [String]
}
