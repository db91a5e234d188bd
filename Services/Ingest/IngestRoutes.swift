import AppStore
import Core
import Hummingbird
import Ledger
import Logging
import Pipeline
import Redis
import ServiceKit

/// ingest's HTTP interface (Services/Ingest/README.md, "Endpoints"; docs/ARCHITECTURE.md §2) and the dependencies its
/// handlers share.
struct IngestRoutes: Sendable {
    let configuration: IngestConfiguration
    let redis: any RedisCommandExecutor
    let authenticator: Authenticator
    /// The checks at the door: a user's signed transaction's signature (``SignedDataVerifier/checkSignature(_:budget:)``:
    /// chain to a trusted root and leaf signature, no payload rules: the verifier applies those), an anonymous
    /// notification's signature and app (``SignedDataVerifier/checkNotification(_:budget:)``).
    let signatures: SignedDataVerifier
    /// What anonymous notifications may spend on certificate chains never seen before.
    let doorBudget: ChainCheckBudget
    let batcher: EnqueueBatcher
    let waiters: ResultWaiters
    let backlog: BacklogMonitor
    let metrics: IngestMetrics
    let clock: PipelineClock
    let logger: Logger

    /// The project this copy of the routes serves (``scoped(to:)``): the default project until a user is known.
    var project = ProjectID.default

    /// The keys of ``project``'s ledger (docs/PROJECTS.md); the pipeline's keys in them are the deployment's.
    var keys: Keys { configuration.shared.keys.inProject(project) }

    /// ``project``'s catalog.
    var catalog: Catalog { configuration.catalog(of: project) }

    /// These routes serving `project`: every ledger key and the catalog are that project's. A user route authenticates
    /// first, then runs on the copy of the user's project, so nothing it reads or writes is another project's.
    func scoped(to project: ProjectID) -> IngestRoutes {
        var routes = self
        routes.project = project
        return routes
    }

    /// The public API (the README's "Endpoints" table, and `openapi.yaml`, served at `GET /openapi.yaml`); the
    /// operators' endpoints (`OperatorEndpoints`) are added next to it or served by a listener of their own
    /// (`TOLLGATE_OPS_PORT`).
    func register(on router: Router<BasicRequestContext>) {
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
        router.get("/v1/products") { request, _ in try await products(request) }
        router.get("/openapi.yaml") { _, _ in Self.openAPIDocument() }
        router.post("/v1/apple/notifications") { request, _ in try await notification(request) }
        router.post("/v1/receipts") { request, _ in
            try await clientSubmission(request) { (body) throws(IngestError) in
                try Submission.receipt(body: body, maxReceiptBytes: configuration.maxReceiptBytes)
            }
        }
        router.post("/v1/transactions") { request, _ in
            try await clientSubmission(request, parse: Submission.transaction)
        }
        router.post("/v1/orders") { request, _ in try await createOrder(request) }
        router.post("/v1/offers/promotional") { request, _ in try await promotionalOffer(request) }
        router.post("/v1/offers/introductory") { request, _ in try await introductoryOffer(request) }
        router.get("/v1/jobs/:jobId") { request, context in
            try await job(request, jobID: context.parameters.get("jobId") ?? "")
        }
        router.get("/v1/users/:userId/entitlements") { request, context in
            try await entitlements(request, userID: context.parameters.get("userId") ?? "")
        }
        router.get("/v1/users/:userId") { request, context in
            try await customer(request, userID: context.parameters.get("userId") ?? "")
        }
        router.get("/v1/transactions/:transactionId") { request, context in
            try await transaction(request, transactionID: context.parameters.get("transactionId") ?? "")
        }
        router.get("/v1/lookup") { request, _ in try await lookup(request) }
        router.post("/v1/admin/apple/set-account-token") { request, _ in try await setAccountToken(request) }
        router.post("/v1/admin/apple/extend") { request, _ in try await extendSubscription(request) }
        router.get("/v1/admin/testers") { request, _ in try await listTesters(request) }
        router.put("/v1/admin/testers/:userId") { request, context in
            try await addTester(request, userID: context.parameters.get("userId") ?? "")
        }
        router.delete("/v1/admin/testers/:userId") { request, context in
            try await removeTester(request, userID: context.parameters.get("userId") ?? "")
        }
        router.get("/v1/events") { request, _ in try await fleetEvents(request) }
        router.get("/v1/users/:userId/events") { request, context in
            try await userEvents(request, userID: context.parameters.get("userId") ?? "")
        }
        router.put("/v1/users/:userId/consent") { request, context in
            try await consent(request, userID: context.parameters.get("userId") ?? "")
        }
        router.post("/v1/users/:userId/grants") { request, context in
            try await createGrant(request, userID: context.parameters.get("userId") ?? "")
        }
        router.delete("/v1/users/:userId/grants/:grantId") { request, context in
            try await revokeGrant(
                request, userID: context.parameters.get("userId") ?? "", grantID: context.parameters.get("grantId") ?? "")
        }
        router.post("/v1/users/:userId/coins/spend") { request, context in
            try await spendCoins(request, userID: context.parameters.get("userId") ?? "")
        }
    }

    /// Reads the body, refusing more than `limit` bytes with `413 payload_too_large`, and a body that takes longer
    /// than `TOLLGATE_HTTP_BODY_TIMEOUT` to arrive (a slow sender holding a connection) with `408 request_timeout`.
    func body(of request: Request, limit: Int) async throws -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw IngestError.payloadTooLarge(limit: limit)
        }
        let timeout = configuration.bodyTimeout
        return try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                do {
                    return Array(try await request.body.collect(upTo: limit).readableBytesView)
                } catch is CancellationError {
                    return nil
                } catch {
                    throw IngestError.payloadTooLarge(limit: limit)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let bytes = first else {
                metrics.reject(reason: "request_timeout")
                throw IngestError.requestTimeout()
            }
            return bytes
        }
    }

    /// Runs a Redis read, turning any Redis failure into `503 redis_unavailable`.
    func redisRead<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as IngestError {
            throw error
        } catch {
            logger.warning("redis read failed", metadata: ["error": "\(error)"])
            throw IngestError.redisUnavailable()
        }
    }

    /// `HGETALL` as a dictionary of UTF-8 strings.
    func hashStrings(_ key: String) async throws -> [String: String] {
        let reply = try await redis.send("HGETALL", key: key)
        guard let items = reply.array, items.count.isMultiple(of: 2) else {
            throw RedisError.protocolError("HGETALL returned \(reply)")
        }
        var hash: [String: String] = [:]
        for index in stride(from: 0, to: items.count, by: 2) {
            if let name = items[index].string, let value = items[index + 1].string { hash[name] = value }
        }
        return hash
    }
}

/// `{"jobId": "<id>"}`, written directly (``Core/JSONWriter``): `JSONSerialization` cost more than the rest of
/// the answer on the notification path.
func jobIDResponse(_ status: HTTPResponse.Status, _ jobID: String) -> Response {
    jsonResponse(status) { $0.member("jobId", jobID) }
}

/// A JSON object answer whose members `members` writes, in the order the answer documents (the key order
/// `JSONSerialization`'s `.sortedKeys` gave these answers before).
func jsonResponse(_ status: HTTPResponse.Status, _ members: (inout JSONWriter) -> Void) -> Response {
    var writer = JSONWriter(capacity: 256)
    writer.beginObject()
    members(&writer)
    writer.endObject()
    return Response(
        status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
}
