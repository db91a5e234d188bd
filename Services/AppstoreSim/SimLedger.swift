import AppStore
import Foundation

/// Everything the simulator knows, in memory: transactions, subscriptions, receipts, notifications and
/// consumption information. Held by ``SimStore`` behind a lock; restart means empty.
struct SimLedger: Sendable {
    var transactions: [String: SimTransaction] = [:]
    /// Transaction IDs of each original transaction, oldest first.
    var chains: [String: [String]] = [:]
    var subscriptions: [String: SimSubscription] = [:]
    var receipts: [String: SimReceipt] = [:]
    /// The receipt holding each original transaction.
    var receiptOfOriginal: [String: String] = [:]
    var notifications: [SimNotification] = []
    var notificationIndex: [String: Int] = [:]
    /// The transactions of each order ID (Look Up Order ID).
    var orders: [String: [String]] = [:]
    /// Renewal date extensions: the dates (ms) each original transaction was extended (Apple allows two a year),
    /// the answer of each request identifier, and each mass extension's status by `productId/requestIdentifier`.
    var extensionDates: [String: [Int64]] = [:]
    var extensionAnswers: [String: ExtendRenewalDateResponse] = [:]
    var massExtensions: [String: MassExtendRenewalDateStatusResponse] = [:]
    /// Send Consumption Information bodies, by transaction ID.
    var consumptionInfo: [String: Data] = [:]
    /// Pre-encoded successful `verifyReceipt` answers; emptied on every change.
    var receiptCache: [String: Data] = [:]
    private var nextIdentifier: Int64

    /// Transaction IDs are 16 digits like Apple's, starting from the launch time in microseconds since
    /// 2020 so that a restarted simulator does not reuse the IDs a ledger has already seen.
    init(now: Date = Date()) {
        let micros = Int64(max(0, now.timeIntervalSince1970 - 1_577_836_800) * 1_000_000) % 900_000_000_000_000
        nextIdentifier = 2_000_000_000_000_000 + micros
    }

    mutating func makeIdentifier() -> String {
        nextIdentifier += 1
        return String(nextIdentifier)
    }

    /// An order ID like the ones on Apple's receipt emails: ten letters and digits.
    static func makeOrderId() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        return String((0..<10).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
    }

    /// The transaction and the latest transaction of its chain, or a 404.
    func transaction(_ id: String) throws(SimError) -> SimTransaction {
        guard let transaction = transactions[id] else { throw .transactionNotFound(id) }
        return transaction
    }

    /// The latest transaction of an original transaction's chain.
    func latest(of originalTransactionId: String) -> SimTransaction? {
        chains[originalTransactionId]?.last.flatMap { transactions[$0] }
    }

    /// Every transaction on the same receipt (the same customer) as `transactionId`, ordered by purchase
    /// date then ID.
    func customerTransactions(of transaction: SimTransaction) -> [SimTransaction] {
        guard let token = receiptOfOriginal[transaction.originalTransactionId], let receipt = receipts[token] else {
            return [transaction]
        }
        return receipt.originalTransactionIds
            .flatMap { chains[$0] ?? [] }
            .compactMap { transactions[$0] }
            .sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
    }

    /// Records a changed or new transaction and drops cached receipt answers.
    mutating func store(_ transaction: SimTransaction) {
        if transactions[transaction.transactionId] == nil {
            chains[transaction.originalTransactionId, default: []].append(transaction.transactionId)
        }
        transactions[transaction.transactionId] = transaction
        receiptCache.removeAll(keepingCapacity: true)
    }

    mutating func store(_ subscription: SimSubscription) {
        subscriptions[subscription.originalTransactionId] = subscription
        receiptCache.removeAll(keepingCapacity: true)
    }

    mutating func append(_ notification: SimNotification) {
        notificationIndex[notification.notificationUUID] = notifications.count
        notifications.append(notification)
    }

    func notification(_ uuid: String) -> SimNotification? {
        notificationIndex[uuid].map { notifications[$0] }
    }

    mutating func update(notification uuid: String, _ change: (inout SimNotification) -> Void) {
        guard let index = notificationIndex[uuid] else { return }
        change(&notifications[index])
    }
}
