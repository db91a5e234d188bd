import AppStore
import Foundation
import NIOCore

extension SimStore {
    /// Pre-encoded `{"status": N}` answers.
    static func statusBody(_ status: Int) -> ByteBuffer {
        var object: [String: Any] = ["status": status]
        if [21005, 21009].contains(status) || (21100...21199).contains(status) { object["is-retryable"] = true }
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{\"status\":\(status)}".utf8)
        return ByteBuffer(bytes: data)
    }

    private static let malformed = statusBody(21002)
    private static let notIssued = statusBody(21003)
    private static let wrongSecret = statusBody(21004)
    private static let sandboxReceipt = statusBody(21007)
    private static let productionReceipt = statusBody(21008)

    /// Apple's `verifyReceipt` answer for a request body sent to the `endpoint` environment.
    /// An app receipt (PKCS#7) must carry this simulator's signature, as Apple's must carry Apple's: a forged or
    /// altered one is `21003`, whatever token it names.
    func verifyReceipt(body: ByteBuffer, endpoint: AppStoreEnvironment) async -> ByteBuffer {
        guard let request = try? JSONDecoder().decode(VerifyReceiptRequest.self, from: Data(body.readableBytesView)),
            let raw = request.receiptData, !raw.isEmpty, raw.utf8.count <= 1 << 20,
            let (token, signedReceipt) = SimReceiptToken.read(raw)
        else {
            return Self.malformed
        }
        if let signedReceipt, await !isSignedReceipt(signedReceipt) {
            return Self.notIssued
        }
        let excludeOld = request.excludeOldTransactions ?? false
        let cacheKey = excludeOld ? token + "|x" : token
        let secret = configuration.sharedSecret
        let iOS6 = configuration.legacyIOS6
        let appAppleId = configuration.appAppleId
        let now = nowMillis
        enum Lookup {
            case answer(ByteBuffer)
            case render
        }
        let lookup = read { ledger -> Lookup in
            guard let receipt = ledger.receipts[token] else { return .answer(Self.notIssued) }
            if receipt.environment == .sandbox && endpoint != .sandbox { return .answer(Self.sandboxReceipt) }
            if receipt.environment != .sandbox && endpoint == .sandbox { return .answer(Self.productionReceipt) }
            if let secret, request.password != secret { return .answer(Self.wrongSecret) }
            if let cached = ledger.receiptCache[cacheKey] { return .answer(ByteBuffer(bytes: cached)) }
            return .render
        }
        switch lookup {
        case .answer(let buffer):
            return buffer
        case .render:
            return renderAndCache(token: token, cacheKey: cacheKey, excludeOld: excludeOld, iOS6: iOS6, appAppleId: appAppleId, now: now)
        }
    }

    private func renderAndCache(
        token: String, cacheKey: String, excludeOld: Bool, iOS6: Bool, appAppleId: Int64, now: Int64
    ) -> ByteBuffer {
        let data: Data? = try? withLedger { ledger, _ throws(SimError) -> Data? in
            guard let receipt = ledger.receipts[token] else { return nil }
            let renderer = LegacyReceiptRenderer(
                ledger: ledger, appAppleId: configuration.appAppleIds[receipt.bundleId] ?? appAppleId, now: now)
            let data = renderer.render(receipt, excludeOldTransactions: excludeOld, iOS6: iOS6)
            // An iOS 6 answer depends on the time (21006 once expired); keep only iOS 7 answers.
            if !iOS6 { ledger.receiptCache[cacheKey] = data }
            return data
        }
        guard let data else { return Self.notIssued }
        return ByteBuffer(bytes: data)
    }
}
