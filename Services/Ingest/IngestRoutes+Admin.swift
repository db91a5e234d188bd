import Core
import Foundation
import Hummingbird
import Logging
import Pipeline

/// Operators' calls of Apple's API over HTTP (issue 31 item 6; a service key with `admin`, or `read` for a look-up):
/// the checks `tollctl` makes on its arguments, then a job of kind `operator` (``OperatorCall``) for the verifier,
/// which alone holds the App Store Server API key and makes the call with the CLI's own code. The answer is
/// `202 {jobId}`, or with `?wait=N` the job's final status, whose `result` is Apple's answer.
///
/// A call serves the key's project (docs/PROJECTS.md, "Background work and operators"): the job carries it, the
/// verifier asks that project's apps and reads or changes that project's ledger only, and the job's status records it,
/// so only that project's keys read the answer (``job(_:jobID:)``).
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
    /// the same job) on the routes of the key's project, so that the job and its status carry that project.
    private func operatorJob(_ call: OperatorCall, _ request: Request, caller: ServiceCaller) async throws -> Response {
        if let problem = call.problem { throw IngestError.invalidRequest(problem) }
        let wait = try waitSeconds(request)
        let routes = scoped(to: caller.project)
        let outcome = try await routes.enqueue(
            Submission(kind: .operatorCall, payload: call.payload), source: .client, userID: nil)
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
}
