import Core
import Foundation
import Hummingbird
import Ledger
import Logging
import Pipeline
import Redis

extension IngestRoutes {
    /// `GET /v1/products`: the default project's catalog, to anyone. `?project=ID` another project's (docs/PROJECTS.md)
    /// to that project's callers only: a user token its secret signed or a service key bound to it (any scope). Anyone
    /// else gets one `404` for every other value, served or not, so that the answer never tells which projects exist
    /// (issue 42, item 12).
    func products(_ request: Request) async throws -> Response {
        var catalog = catalog
        if let text = request.uri.queryParameters.get("project"), ProjectID(String(text))?.isDefault != true {
            // A caller without credentials (or with refused ones) is nobody's: the same 404 as a wrong project.
            let caller = try? await authenticator.authenticate(request)
            guard let id = ProjectID(String(text)), let caller, caller.project == id,
                configuration.projects.contains(where: { $0.id == id })
            else {
                throw IngestError.notFound("no such project for this caller")
            }
            catalog = configuration.catalog(of: id)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(catalog)
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// `GET /openapi.yaml`: this API as an OpenAPI 3.1 document (`Services/Ingest/openapi.yaml`, compiled in).
    static func openAPIDocument() -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/yaml"],
            body: .init(byteBuffer: ByteBuffer(bytes: PackageResources.openapi_yaml)))
    }

    /// `GET /v1/jobs/{jobId}`: the job's status; users see only their own jobs (`403`), services any.
    func job(_ request: Request, jobID: String) async throws -> Response {
        let principal = try await authenticator.authenticate(request)
        guard jobID.utf8.count == 32, jobID.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            throw IngestError.notFound("no job \(jobID.prefix(64))")
        }
        guard let status = try await redisRead({ try await readStatus(jobID) }) else {
            throw IngestError.notFound("no job \(jobID)")
        }
        // A job of another project is another user's, whatever its user id (docs/PROJECTS.md).
        guard principal.mayRead(user: status.userID), ProjectID(field: status.project) == principal.project else {
            throw IngestError.forbidden("this job belongs to another user")
        }
        return JobStatusBody.response(.ok, status)
    }

    /// `GET /v1/users/{userId}/entitlements`: coins and entitlement states as the fulfiller wrote them, with the
    /// user's labelled grants merged in (``EntitlementsView``; a user's own call lists them too), and the user's
    /// sandbox side in its own `sandbox` block (``EntitlementsView/reading(sandbox:merged:nowMilliseconds:)``), added to
    /// the top level only for a tester or under `TOLLGATE_SANDBOX_VALUE=everyone` (`sandboxMerged`; issue 42): free
    /// TestFlight purchases never unlock the App Store build. Service-side figures (`GET /v1/users/{id}`, events,
    /// exports, metrics) keep the sides apart.
    func entitlements(_ request: Request, userID: String) async throws -> Response {
        let principal = try await authenticator.authenticate(request)
        guard principal.mayRead(user: userID) else { throw IngestError.forbidden("you may read only your own entitlements") }
        guard UserID.isValid(userID) else {
            throw IngestError.notFound("no user \(userID.prefix(64))")
        }
        // The caller's project's ledger only (docs/PROJECTS.md): another project's user of this id is someone else.
        let routes = scoped(to: principal.project)
        let view = try await redisRead { try await routes.unionView(of: userID) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(view))))
    }

    /// The user's entitlements as their app sees them: the primary side with grants, the sandbox side in its block
    /// (and added to the top level where it counts as production value: ``sandboxCounts(for:)``).
    func unionView(of userID: String) async throws -> EntitlementsView {
        let hash = try await hashStrings(keys.account(user: userID))
        let grants = try await LedgerGrants.list(user: userID, keys: keys, on: redis)
        let sandbox = try await hashStrings(keys.on(.sandbox).account(user: userID))
        let merged = try await sandboxCounts(for: userID)
        let now = clock.nowMilliseconds()
        return EntitlementsView(hash: hash, grants: grants, nowMilliseconds: now)
            .reading(sandbox: sandbox, merged: merged, nowMilliseconds: now)
    }

    /// `POST /v1/orders {productId}`: a user's order of a catalog product → `201 {orderNo, appAccountToken}`,
    /// stored under the ledger keys (``Keys/order(user:orderNo:)``, ``Keys/orders(user:)``,
    /// ``Keys/pendingOrders(user:)``, ``Keys/appAccountToken(_:)``) with state `pending`. Unpaid, the order and its
    /// token mapping expire after `TOLLGATE_ORDER_TTL`; a user with `TOLLGATE_MAX_PENDING_ORDERS` unpaid orders gets
    /// `429 too_many_pending_orders` (with `Retry-After` until the oldest expires) and nothing is written.
    func createOrder(_ request: Request) async throws -> Response {
        let user = try await authenticator.user(request)
        return try await scoped(to: user.project).createOrder(request, userID: user.id)
    }

    /// An order of `userID` in this copy's ``project``.
    private func createOrder(_ request: Request, userID: String) async throws -> Response {
        let object = try Submission.jsonFields(try await body(of: request, limit: 4096))
        guard case .string(let productId)? = object.members["productId"], !productId.isEmpty else {
            throw IngestError.invalidRequest("productId must be a non-empty string")
        }
        guard catalog.product(productId) != nil else { throw IngestError.unknownProduct(productId) }
        let order = try await newOrder(userID: userID, productId: productId)
        return jsonResponse(.created) { answer in
            answer.member("appAccountToken", order.appAccountToken)
            answer.member("orderNo", order.orderNo)
        }
    }

    /// Writes a new pending order of a catalog product (`ingest_v2_create_order`), or `429 too_many_pending_orders`
    /// with nothing written.
    func newOrder(userID: String, productId: String) async throws -> Order {
        let order = Order(
            orderNo: Order.newOrderNo(), userID: userID, productId: productId,
            appAccountToken: Order.newAppAccountToken(), createdAtMilliseconds: clock.nowMilliseconds())
        let creation = try await redisRead {
            try await IngestFunctions.createOrder(
                order, keys: keys, lifetime: configuration.orderLifetime,
                cap: configuration.maxPendingOrders, on: redis)
        }
        if case .tooManyPending(let retryAfter) = creation {
            metrics.reject(reason: "too_many_pending_orders")
            throw IngestError.tooManyPendingOrders(retryAfter: retryAfter)
        }
        logger.info("order created", metadata: ["order.no": "\(order.orderNo)", "product": "\(productId)"])
        return order
    }
}
