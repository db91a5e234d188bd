import Core
import Foundation
import Hummingbird
import Ledger
import Pipeline
import Redis

/// The customer API's reads for the app's backend and its support staff (a service key with `read`; issue 31):
/// one user, one transaction, and look-ups by an original transaction or an `appAccountToken`.
extension IngestRoutes {
    /// `GET /v1/users/{userId}`: everything the ledger holds of the user (``CustomerInfo``), read in one call in the
    /// user's partition. `404 not_found` when the ledger holds nothing of them.
    func customer(_ request: Request, userID: String) async throws -> Response {
        _ = try await authenticator.service(request, scope: .read)
        guard UserID.isValid(userID) else { throw IngestError.notFound("no user \(userID.prefix(64))") }
        let info = try await redisRead { try await CustomerInfo.read(on: redis, keys: keys, user: userID) }
        guard !info.isEmpty else { throw IngestError.notFound("the ledger holds nothing of user \(userID)") }
        return Self.json(info.json(nowMilliseconds: clock.nowMilliseconds()))
    }

    /// `GET /v1/transactions/{transactionId}`: the ledger's record of one transaction and its owner, found through the
    /// owner index (``Keys/transactionOwner(partition:transactionId:)``), which every partition is asked for.
    func transaction(_ request: Request, transactionID: String) async throws -> Response {
        _ = try await authenticator.service(request, scope: .read)
        guard Self.isAppleIdentifier(transactionID) else { throw IngestError.notFound("no transaction \(transactionID.prefix(64))") }
        let owners = try await redisRead {
            try await redis.pipeline(
                keys.partitions.map { RedisCommand("GET", keys.transactionOwner(partition: $0, transactionId: transactionID)) })
        }
        guard let owner = owners.lazy.compactMap(\.string).first(where: UserID.isValid) else {
            throw IngestError.notFound("the ledger holds no transaction \(transactionID)")
        }
        let hash = try await redisRead { try await hashStrings(keys.transaction(user: owner, transactionId: transactionID)) }
        guard let record = TransactionRecord(hash: hash) else {
            throw IngestError.notFound("the ledger holds no transaction \(transactionID)")
        }
        return jsonResponse(.ok) { writer in
            writer.member("userId", owner)
            writer.key("transaction")
            CustomerInfo.write(record, to: &writer)
        }
    }

    /// `GET /v1/lookup?originalTransactionId=…` or `?appAccountToken=…` (exactly one): the owner and the
    /// transactions. A purchase chain's owner is its binding (the first user to claim it); a token's, the order or
    /// user it maps to. The transactions are the owner's of that chain (of the order's chain for an order's token,
    /// every one for a user's own token), among their newest ``CustomerInfo/limit``.
    func lookup(_ request: Request) async throws -> Response {
        _ = try await authenticator.service(request, scope: .read)
        let query = request.uri.queryParameters
        let given = ["originalTransactionId", "appAccountToken", "orderId"].filter { query.get($0) != nil }
        guard given.count == 1 else {
            throw IngestError.invalidRequest("give exactly one of originalTransactionId and appAccountToken")
        }
        var owner: String?
        var order: String?
        var chains: Set<String>?
        if let otid = query.get("originalTransactionId") {
            guard Self.isAppleIdentifier(otid) else { throw IngestError.invalidRequest("originalTransactionId is not valid") }
            owner = try await redisRead { try await redis.send(RedisCommand("GET", keys.binding(originalTransactionId: otid))).string }
            chains = [otid]
        } else if let token = query.get("appAccountToken") {
            guard let uuid = UUID(uuidString: token) else { throw IngestError.invalidRequest("appAccountToken is not a UUID") }
            let mapping = try await redisRead { try await hashStrings(keys.appAccountToken(uuid.uuidString.lowercased())) }
            owner = mapping[Order.TokenField.user]
            order = mapping[Order.TokenField.orderNo]
        } else {
            // Apple's Look Up Order ID is called by the verifier's side (tollctl lookup ORDER_ID); ingest calls no Apple API.
            throw IngestError.invalidRequest("orderId look-ups are not served over HTTP yet; use tollctl lookup ORDER_ID")
        }
        guard let owner, UserID.isValid(owner) else { throw IngestError.notFound("no user owns it in the ledger") }
        let info = try await redisRead { try await CustomerInfo.read(on: redis, keys: keys, user: owner) }
        if let order {
            let paid = info.orders.first { $0.orderNo == order }?.transactionId
            let chain = paid.flatMap { tid in info.transactions.first { $0.transactionId == tid }?.originalTransactionId }
            chains = Set([chain].compactMap { $0 })
        }
        let transactions = info.transactions.filter { chains?.contains($0.originalTransactionId) ?? true }
        return jsonResponse(.ok) { writer in
            writer.member("userId", owner)
            writer.member("orderNo", order)
            writer.array("transactions", transactions) { CustomerInfo.write($0, to: &$1) }
        }
    }

    /// An App Store transaction identifier as the ledger keys it: 1–64 letters, digits, `.`, `-`, `_`.
    static func isAppleIdentifier(_ text: String) -> Bool { PlainIdentifier.isValid(text) }

    static func json(_ bytes: [UInt8]) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
