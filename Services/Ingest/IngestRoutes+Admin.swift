import Core
import Foundation
import Hummingbird
import Logging
import Pipeline

/// Operators' calls of Apple's API over HTTP (issue 31 item 6; a service key with `admin`, or `lookup` for a look-up):
/// the checks `tollctl` makes on its arguments, then a job of kind `operator` (``OperatorCall``) for the verifier,
/// which alone holds the App Store Server API key and makes the call with the CLI's own code. The answer is
/// `202 {jobId}`, or with `?wait=N` the job's final status, whose `result` is Apple's answer.
///
/// A call serves the key's project (docs/PROJECTS.md, "Background work and operators"): the job carries it, the
/// verifier asks that project's apps and reads or changes that project's ledger only, and the job's status records it,
/// so only that project's keys read the answer (``job(_:jobID:)``).
///
/// Each key's calls are bounded (issue 42 item 3; ``ServiceKeyLimits``): a fleet-wide rate (`429 key_rate_limited`,
/// `Retry-After`) and a number of unfinished jobs (`429 key_too_many_in_flight`), drawing on the service keys' backlog
/// budget, apart from the app users' (`503 overloaded` past it). The verifier then takes each call's token of the
/// app's fleet-wide Apple bucket, as for every call to Apple.
extension IngestRoutes {
    /// `POST /v1/admin/apple/set-account-token` `{"originalTransactionId", "userId", "environment"?}`.
    func setAccountToken(_ request: Request) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .admin)
        let fields = try Submission.jsonFields(try await body(of: request, limit: 2048))
        let call: OperatorCall
        do {
            call = OperatorCall(
                .setAccountToken(
                    originalTransactionId: try fields.string("originalTransactionId"), userId: try fields.string("userId"),
                    environment: try fields.optionalString("environment")),
                by: caller.name, project: caller.project)
        } catch {
            throw IngestError.invalidRequest("the body must be {\"originalTransactionId\", \"userId\", \"environment\"?}: \(error.message)")
        }
        return try await operatorJob(call, request, caller: caller)
    }

    /// `POST /v1/admin/apple/extend` `{"originalTransactionId", "days", "reason"?, "requestId"?}`: the same
    /// `requestId` again is the same request, at Apple and here (one job).
    func extendSubscription(_ request: Request) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .admin)
        let fields = try Submission.jsonFields(try await body(of: request, limit: 2048))
        let call: OperatorCall
        do {
            call = OperatorCall(
                .extend(
                    originalTransactionId: try fields.string("originalTransactionId"), days: try fields.int("days"),
                    reason: try fields.optionalInt("reason") ?? 0,
                    requestId: (try fields.optionalString("requestId") ?? UUID().uuidString).lowercased()),
                by: caller.name, project: caller.project)
        } catch {
            throw IngestError.invalidRequest(
                "the body must be {\"originalTransactionId\", \"days\", \"reason\"?, \"requestId\"?}: \(error.message)")
        }
        return try await operatorJob(call, request, caller: caller)
    }

    /// `GET /v1/lookup?orderId=…`: Apple's Look Up Order ID, each transaction verified, with its owner.
    func lookupOrder(_ request: Request, orderId: String, caller: ServiceCaller) async throws -> Response {
        try await operatorJob(
            OperatorCall(.lookupOrder(orderId: orderId), by: caller.name, project: caller.project), request, caller: caller)
    }

    /// Enqueues the call (no user: the key's name and its project are in the payload; the same payload within a day is
    /// the same job) on the routes of the key's project, so that the job and its status carry that project, after a
    /// token of the key's bucket and within its in-flight cap.
    private func operatorJob(_ call: OperatorCall, _ request: Request, caller: ServiceCaller) async throws -> Response {
        if let problem = call.problem { throw IngestError.invalidRequest(problem) }
        let wait = try waitSeconds(request)
        let routes = scoped(to: caller.project)
        let limit = configuration.serviceKeyLimits.limit(for: caller.name)
        try await routes.takeKeyToken(caller.name, limit)
        let outcome: EnqueueBatcher.Outcome
        do {
            outcome = try await routes.enqueue(
                Submission(kind: .operatorCall, payload: call.payload), source: .client, userID: nil,
                serviceKey: (caller.name, limit.maxInFlight))
        } catch let error as IngestError where error.code == "too_many_in_flight" {
            throw IngestError.keyTooManyInFlight(caller.name, limit: limit.maxInFlight)
        }
        logger.info(
            "operator call queued",
            metadata: [
                "job.id": "\(outcome.jobID)", "key": "\(caller.name)", "project": "\(caller.project)",
                "created": "\(outcome.created)",
            ])
        guard wait > 0 else { return jobIDResponse(.accepted, outcome.jobID) }
        return try await routes.waitForResult(
            jobID: outcome.jobID, userID: "service:\(caller.name)", deadline: .now + .seconds(wait))
    }

    /// One token of the key's fleet-wide bucket of job-making calls (in the key's project), or `429 key_rate_limited`
    /// with the wait until the next one.
    func takeKeyToken(_ name: String, _ limit: ServiceKeyLimits.Limit) async throws {
        let bucket = TokenBucket(key: keys.jobBucket(serviceKey: name), ratePerSecond: limit.ratePerSecond, capacity: Double(limit.burst))
        let (granted, wait) = try await redisRead { try await RateLimitFunctions.take(on: redis, bucket: bucket) }
        guard granted else { throw IngestError.keyRateLimited(name, retryAfter: wait) }
    }
}
