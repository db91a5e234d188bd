import AppStore
import AppStoreTesting
import Foundation
import Synchronization

/// The simulator's state, shared by every handler and the notification dispatcher. One lock guards the
/// ``SimLedger``; changes and signing happen under it, and successful `verifyReceipt` answers are cached
/// pre-encoded so that the hot path is a dictionary lookup.
final class SimStore: Sendable {
    let configuration: SimConfiguration
    let signer: JWSSigner
    /// Signs the app receipts purchases hand out, as the App Store does (PKCS#7).
    let receiptSigner: AppReceiptSigner
    /// Proves the app receipts `verifyReceipt` is sent were signed by this simulator, as Apple does (`21003` if not).
    let receiptVerifier: ReceiptSignatureVerifier
    /// App receipts whose signature was proven, so that the `verifyReceipt` hot path stays a lookup (bounded: emptied
    /// when full).
    private let provenReceipts = Mutex(Set<[UInt8]>())
    private let ledger: Mutex<SimLedger>
    private let clock: @Sendable () -> Date

    init(
        configuration: SimConfiguration, authority: TestCertificateAuthority, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        signer = authority.signer()
        receiptSigner = authority.receiptSigner()
        receiptVerifier = ReceiptSignatureVerifier(roots: [authority.root], intermediates: [authority.intermediate])
        self.clock = clock
        self.ledger = Mutex(SimLedger(now: clock()))
    }

    /// Whether `bytes` is an app receipt this simulator signed (``receiptVerifier``, remembered once proven).
    func isSignedReceipt(_ bytes: [UInt8]) async -> Bool {
        if provenReceipts.withLock({ $0.contains(bytes) }) { return true }
        guard case .success = await receiptVerifier.verify(bytes) else { return false }
        provenReceipts.withLock { proven in
            if proven.count >= 10_000 { proven.removeAll(keepingCapacity: true) }
            proven.insert(bytes)
        }
        return true
    }

    /// Now in milliseconds since 1970.
    var nowMillis: Int64 { Int64((clock().timeIntervalSince1970 * 1000).rounded()) }

    private func context() -> SimContext {
        SimContext(signer: signer, receiptSigner: receiptSigner, configuration: configuration, now: nowMillis)
    }

    /// Runs `body` on the ledger under the lock.
    func withLedger<T>(_ body: (inout SimLedger, SimContext) throws(SimError) -> T) throws(SimError) -> T {
        let context = context()
        let result: Result<T, SimError> = ledger.withLock { ledger in
            do throws(SimError) {
                return .success(try body(&ledger, context))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads the ledger under the lock.
    func read<T>(_ body: (SimLedger) -> T) -> T {
        ledger.withLock { body($0) }
    }

    func purchase(_ request: PurchaseRequest) throws(SimError) -> PurchaseOutcome {
        try withLedger { ledger, context throws(SimError) in try ledger.purchase(request, context: context) }
    }

    func apply(_ request: EventRequest) throws(SimError) -> EventOutcome {
        try withLedger { ledger, context throws(SimError) in try ledger.apply(request, context: context) }
    }

    /// Records one delivery attempt and the resulting delivery state.
    func record(attempt: SimSendAttempt, for uuid: String, delivery: SimNotification.Delivery) {
        ledger.withLock { ledger in
            ledger.update(notification: uuid) {
                $0.attempts.append(attempt)
                $0.delivery = delivery
            }
        }
    }

    func notification(_ uuid: String) -> SimNotification? {
        read { $0.notification(uuid) }
    }
}
