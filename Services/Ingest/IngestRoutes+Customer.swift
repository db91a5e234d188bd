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
        let caller = try await authenticator.service(request, scope: .read)
        let keys = scoped(to: caller.project).keys  // the key's project's ledger only (docs/PROJECTS.md)
        guard UserID.isValid(userID) else { throw IngestError.notFound("no user \(userID.prefix(64))") }
        let info = try await redisRead { try await CustomerInfo.read(on: redis, keys: keys, user: userID) }
        guard !info.isEmpty else { throw IngestError.notFound("the ledger holds nothing of user \(userID)") }
        return Self.json(info.json(nowMilliseconds: clock.nowMilliseconds()))
    }

    /// `GET /v1/transactions/{transactionId}`: the ledger's record of one transaction and its owner
    /// (``CustomerLookup/transaction(_:on:keys:)``).
    func transaction(_ request: Request, transactionID: String) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .read)
        let keys = scoped(to: caller.project).keys  // the key's project's ledger only (docs/PROJECTS.md)
        guard Self.isAppleIdentifier(transactionID) else { throw IngestError.notFound("no transaction \(transactionID.prefix(64))") }
        guard let (owner, record) = try await redisRead({ try await CustomerLookup.transaction(transactionID, on: redis, keys: keys) })
        else { throw IngestError.notFound("the ledger holds no transaction \(transactionID)") }
        return jsonResponse(.ok) { writer in
            writer.member("userId", owner)
            writer.key("transaction")
            CustomerInfo.write(record, to: &writer)
        }
    }

    /// `GET /v1/lookup?originalTransactionId=…` or `?appAccountToken=…` (exactly one): the owner and the
    /// transactions (``CustomerLookup``), with `read`; `?orderId=…` asks Apple through the verifier
    /// (``lookupOrder(_:orderId:caller:)``), with `lookup` or `admin` (`read` alone: `403 missing_scope`).
    func lookup(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let given = ["originalTransactionId", "appAccountToken", "orderId"].filter { query.get($0) != nil }
        // A look-up that asks Apple spends the app's Apple budget: it needs its own scope (issue 42 item 3).
        let caller: ServiceCaller
        if given == ["orderId"] {
            caller = try await authenticator.service(request, anyOf: [.lookup, .admin])
        } else {
            caller = try await authenticator.service(request, scope: .read)
        }
        let keys = scoped(to: caller.project).keys  // the key's project's ledger only (docs/PROJECTS.md)
        guard given.count == 1 else {
            throw IngestError.invalidRequest("give exactly one of originalTransactionId, appAccountToken and orderId")
        }
        let answer: CustomerLookup.Answer?
        if let otid = query.get("originalTransactionId") {
            guard Self.isAppleIdentifier(otid) else { throw IngestError.invalidRequest("originalTransactionId is not valid") }
            answer = try await redisRead { try await CustomerLookup.chain(otid, on: redis, keys: keys) }
        } else if let token = query.get("appAccountToken") {
            guard let uuid = UUID(uuidString: token) else { throw IngestError.invalidRequest("appAccountToken is not a UUID") }
            answer = try await redisRead { try await CustomerLookup.token(uuid, on: redis, keys: keys) }
        } else {
            // Apple's Look Up Order ID: the verifier makes the call (a job), as it makes every call to Apple.
            return try await lookupOrder(request, orderId: query.get("orderId") ?? "", caller: caller)
        }
        guard let answer else { throw IngestError.notFound("no user owns it in the ledger") }
        return jsonResponse(.ok) { writer in
            writer.member("userId", answer.userId)
            writer.member("orderNo", answer.orderNo)
            writer.array("transactions", answer.transactions) { CustomerInfo.write($0, to: &$1) }
        }
    }

    /// An App Store transaction identifier as the ledger keys it: 1–64 letters, digits, `.`, `-`, `_`.
    static func isAppleIdentifier(_ text: String) -> Bool { PlainIdentifier.isValid(text) }

    static func json(_ bytes: [UInt8]) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
