import AppStore
import Core
import Crypto
import Foundation
import Logging
import Pipeline
import Redis

/// A user's validated receipts, remembered for `TOLLGATE_RECEIPT_MEMORY`: posting the same receipt again (with
/// another `orderNo`, which changes ingest's dedupe key) takes Apple's answer from here instead of asking Apple
/// again. What a job pays is still the ledger's decision. `tg:{u:<userId>}:receipt.validated:<sha256 of the
/// receipt>` (in the user's slot) holds the validated receipt's JSON, at most ``maximumBytes``; a cache, so a lost
/// write only costs Apple calls. The receipt is a client job's payload as ingest normalized it (`+` restored,
/// whitespace removed), so one receipt is one key however the app spelled it.
enum ReceiptMemory {
    static let maximumBytes = 256 << 10

    static func key(_ keys: Keys, user: String, receipt: [UInt8]) -> String {
        "\(keys.projectPrefix):\(keys.userTag(user)):receipt.validated:\(Hex.lowercase(Array(SHA256.hash(data: receipt))))"
    }

    /// The validation remembered for `user`'s receipt `receipt`, if any.
    static func recall(on redis: any RedisCommandExecutor, keys: Keys, user: String, receipt: [UInt8]) async -> ValidatedReceipt? {
        guard let reply = try? await redis.send(RedisCommand("GET", key: key(keys, user: user, receipt: receipt))),
            let bytes = reply.bytes, let value = try? JSONReader.parse(bytes), let fields = try? JSONFields(value)
        else { return nil }
        return try? ValidatedReceipt(json: fields)
    }

    /// Remembers `validated` for `user`'s receipt `receipt` for `lifetime`.
    static func remember(
        _ validated: ValidatedReceipt, on redis: any RedisCommandExecutor, keys: Keys, user: String, receipt: [UInt8],
        lifetime: Duration, logger: Logger
    ) async {
        var writer = JSONWriter()
        validated.write(to: &writer)
        guard lifetime > .zero, writer.bytes.count <= maximumBytes else { return }
        do {
            _ = try await redis.send(
                RedisCommand("SET", key: key(keys, user: user, receipt: receipt), writer.bytes, "PX", max(1, lifetime.milliseconds)))
        } catch {
            logger.warning("Could not remember a validated receipt", metadata: ["error": "\(error)"])
        }
    }
}

extension ValidatedReceipt {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("bundleId", bundleId)
        writer.member("environment", environment.rawValue)
        writer.member("latestReceipt", latestReceipt)
        writer.array("renewals", renewals) { $0.write(to: &$1) }
        writer.member("route", route.rawValue)
        writer.array("transactions", transactions) { $0.write(to: &$1) }
        writer.endObject()
    }

    init(json fields: JSONFields) throws(JSONError) {
        self.init(
            environment: AppStoreEnvironment(rawValue: try fields.string("environment")),
            transactions: try fields.array("transactions") { (value, path) throws(JSONError) in
                try PurchaseEventTransaction(json: JSONFields(value, path: path))
            },
            renewals: try fields.array("renewals") { (value, path) throws(JSONError) in
                try PurchaseEventRenewal(json: JSONFields(value, path: path))
            },
            latestReceipt: try fields.optionalString("latestReceipt"), route: try fields.raw("route", as: ReceiptValidationMode.self),
            bundleId: try fields.optionalString("bundleId"))
    }
}
