import AppStore
import Core
import Crypto
import Foundation
import Hummingbird
import Logging
import Pipeline

extension IngestRoutes {
    /// `POST /v1/apple/notifications`: no auth (Apple sends none); structure checks, then `200` once the job
    /// is durably in Redis (and acknowledged by replicas when configured), `503` otherwise so Apple retries.
    func notification(_ request: Request) async throws -> Response {
        let body = try await body(of: request, limit: Submission.maxNotificationBytes)
        var submission = try Submission.notification(
            body: body, v1SharedSecret: configuration.v1SharedSecret, v1SharedSecrets: configuration.v1SharedSecrets)
        if let jws = submission.signed { submission.notificationUUID = try await checkNotification(jws) }
        let outcome = try await enqueue(submission, source: .apple, userID: nil)
        return jobIDResponse(.ok, outcome.jobID)
    }

    /// `POST /v1/receipts` and `POST /v1/transactions`: an authenticated user's submission; `202 {jobId}`,
    /// or with `?wait=N` (N ≤ 30) the job's status as soon as it is final (`200`), else at the deadline (`202`).
    func clientSubmission(
        _ request: Request, parse: ([UInt8]) throws(IngestError) -> Submission
    ) async throws -> Response {
        let user = try await authenticator.user(request)
        return try await scoped(to: user.project).clientSubmission(request, userID: user.id, parse: parse)
    }

    /// A submission of `userID`, of this copy's ``project`` (docs/PROJECTS.md): its job carries the project, and the
    /// verifier refuses a purchase of another project's app (`wrong_project`).
    private func clientSubmission(
        _ request: Request, userID: String, parse: ([UInt8]) throws(IngestError) -> Submission
    ) async throws -> Response {
        let wait = try waitSeconds(request)
        let body = try await body(of: request, limit: configuration.maxReceiptBytes + Submission.clientEnvelopeBytes)
        let submission = try parse(body)
        try await takeSubmissionToken(userID)
        try await checkSignature(submission)
        guard wait > 0 else {
            return jobIDResponse(.accepted, try await enqueue(submission, source: .client, userID: userID).jobID)
        }
        // The waiter is registered under the new job's id before the job exists: a result published from then on
        // is remembered, so a job this request created needs no status read until it is signalled.
        let jobID = keys.newJobID(partition: keys.partition(ofUser: userID))
        let deadline = ContinuousClock.now + .seconds(wait)
        let id = try await registerWaiter(jobID: jobID, userID: userID)
        let outcome: EnqueueBatcher.Outcome
        do {
            outcome = try await enqueue(submission, source: .client, userID: userID, jobID: jobID)
        } catch {
            await waiters.unregister(jobID: jobID, id: id)
            throw error
        }
        guard outcome.created, outcome.jobID == jobID else {
            // A duplicate of an earlier job: wait for that one, reading its status first.
            await waiters.unregister(jobID: jobID, id: id)
            return try await waitForResult(jobID: outcome.jobID, userID: userID, deadline: deadline)
        }
        return try await waitRegistered(jobID: jobID, waiter: id, deadline: deadline, readFirst: false)
    }

    /// Refuses a signed submission whose signature does not verify under a leaf that chains to a trusted root
    /// (`401 invalid_signature`): forgeries are refused at the door and leave nothing in Redis.
    func checkSignature(_ submission: Submission) async throws {
        guard let jws = submission.signed else { return }
        switch await signatures.checkSignature(jws) {
        case .verified:
            return
        case .rejected(let failure):
            metrics.reject(reason: "invalid_signature")
            throw refusal(IngestError.invalidSignature("\(failure.code.rawValue): \(failure.code.sentence)"), failure)
        case .retryable:
            throw IngestError.overloaded("the signature could not be checked now; retry")
        }
    }

    /// An anonymous V2 notification's door check: Apple's signature (`401 invalid_signature`), then a notification of
    /// this app and environment (`403` with the verifier's code: `wrong_bundle_id`, `wrong_environment`,
    /// `sandbox_not_allowed`, `wrong_app_apple_id`; `400 not_a_notification`). A chain never seen before is checked
    /// within ``doorBudget`` (`503 chain_check_deferred` past it). Returns the notification's UUID.
    func checkNotification(_ jws: String) async throws -> String {
        switch await signatures.checkNotification(jws, budget: doorBudget) {
        case .accepted(let uuid):
            return uuid
        case .badSignature(let failure):
            metrics.reject(reason: "invalid_signature")
            throw refusal(IngestError.invalidSignature("\(failure.code.rawValue): \(failure.code.sentence)"), failure)
        case .notForThisApp(let failure):
            metrics.reject(reason: "not_for_this_app")
            throw refusal(IngestError.notForThisApp(failure.code.rawValue, failure.code.sentence), failure)
        case .deferred(let failure):
            metrics.reject(reason: "chain_check_deferred")
            throw refusal(IngestError.chainCheckDeferred(failure.code.sentence), failure)
        }
    }

    /// `error`, after logging what exactly `failure` found (at debug: strangers choose it): the caller gets the code
    /// and its sentence only.
    private func refusal(_ error: IngestError, _ failure: VerificationFailure) -> IngestError {
        logger.debug("Refused at the door", metadata: ["reason": "\(failure.code.rawValue)", "detail": "\(failure.message)"])
        return error
    }

    /// One token of the user's fleet-wide submission bucket (`TOLLGATE_USER_RATE`, `TOLLGATE_USER_BURST`), or
    /// `429 rate_limited` with the wait until the next one.
    func takeSubmissionToken(_ userID: String) async throws {
        let bucket = TokenBucket(
            key: keys.submissionBucket(user: userID), ratePerSecond: configuration.userRatePerSecond,
            capacity: Double(configuration.userBurst))
        let (granted, wait) = try await redisRead { try await RateLimitFunctions.take(on: redis, bucket: bucket) }
        guard granted else {
            metrics.reject(reason: "rate_limited")
            throw IngestError.rateLimited(retryAfter: wait)
        }
    }

    /// Enqueues atomically (dedupe key, source budget, the user's in-flight cap, job, `queued` status) through the
    /// group-commit batcher, in the partition the job starts in (``partition(of:source:userID:dedupeHash:)``); a
    /// given `jobID` must name that partition (``Keys/newJobID(partition:)``).
    ///
    /// A service key's job (`serviceKey`: its name and most unfinished jobs) starts in the key's own partition, is
    /// counted in the service keys' budget (``Job/Budget/service``), apart from the app users', and in the key's
    /// in-flight set (``Keys/inFlight(serviceKey:partition:)``).
    func enqueue(
        _ submission: Submission, source: Job.Source, userID: String?, jobID: String? = nil,
        serviceKey: (name: String, maxInFlight: Int)? = nil
    ) async throws -> EnqueueBatcher.Outcome {
        let now = clock.nowMilliseconds()
        let dedupeHash = dedupeHash(submission, source: source, userID: userID)
        let partition =
            serviceKey.map { keys.partition(ofUser: "key:" + $0.name) }
            ?? partition(of: submission, source: source, userID: userID, dedupeHash: dedupeHash)
        var job = Job(
            id: jobID ?? keys.newJobID(partition: partition), kind: submission.kind, payload: submission.payload,
            source: source, userID: userID, orderNo: submission.orderNo, receivedAtMilliseconds: now,
            countedBytes: submission.payload.count, dedupeKey: keys.partitionKey(partition, "dedupe", dedupeHash))
        // A client's job is its user's project's; Apple's are placed by the verifier, from the app Apple signed.
        if source == .client { job.project = project }
        var status = JobStatus(jobID: job.id, state: .queued, kind: job.kind, userID: userID, updatedAtMilliseconds: now)
        // Only the project's own callers read it (``IngestRoutes/job(_:jobID:)``).
        status.project = job.project.label
        var limits = IngestFunctions.Limits(
            maxJobs: configuration.maxBacklog,
            maxBytes: source == .apple ? configuration.backlogBytesApple : configuration.backlogBytesClient,
            inFlightCap: source == .client ? configuration.userMaxInFlight : 0)
        var inFlightKey: String?
        if let serviceKey {
            job.budget = Job.Budget.service
            limits = IngestFunctions.Limits(
                maxJobs: configuration.maxBacklogService, maxBytes: configuration.backlogBytesService,
                inFlightCap: serviceKey.maxInFlight)
            inFlightKey = keys.inFlight(serviceKey: serviceKey.name, partition: partition)
        }
        let command = IngestFunctions.enqueueCommand(
            job: job, status: status, partition: partition, keys: keys,
            limits: limits.perPartition(of: keys.layout.count, jobBytes: submission.payload.count), inFlightKey: inFlightKey,
            nowMilliseconds: now)
        let outcome = try await batcher.enqueue(command)
        metrics.job(kind: submission.kind.rawValue, created: outcome.created)
        logger.debug(
            "job enqueued",
            metadata: [
                "job.id": "\(outcome.jobID)", "job.kind": "\(submission.kind.rawValue)", "job.created": "\(outcome.created)",
            ])
        return outcome
    }

    /// The partition J a job starts in, as ``PartitionRouter/partition(ofSubmissionBy:notification:dedupeHash:)``
    /// decides it (docs/CLUSTER.md §3 "Who decides the partition"): a user's submission in the user's partition Pu; a
    /// notification by the ids it names, read unverified here from a V2 `signedPayload` (`signedTransactionInfo`'s
    /// `originalTransactionId`, the `notificationUUID`) or a V1 body (only a locality hint; the verifier checks
    /// everything); anything else by its dedupe hash. Nothing is decoded with one partition or for a client's
    /// submission, whose user decides alone.
    func partition(of submission: Submission, source: Job.Source, userID: String?, dedupeHash: String) -> Partition {
        let router = keys.router
        let submitter = source == .client ? userID : nil
        guard !keys.layout.isSingle, submitter == nil else {
            return router.partition(ofSubmissionBy: submitter, notification: nil, dedupeHash: dedupeHash)
        }
        var notification: (originalTransactionId: String?, uuid: String?)?
        switch submission.kind {
        case .notificationV2:
            if let signed = submission.signed, let peek = NotificationPeek(signedPayload: signed) {
                notification = (peek.originalTransactionId, peek.notificationUUID)
            }
        case .notificationV1:
            notification = (submission.originalTransactionId, nil)
        case .receipt, .transaction, .operatorCall:
            break
        }
        return router.partition(ofSubmissionBy: nil, notification: notification, dedupeHash: dedupeHash)
    }

    /// `sha256(source, user, kind, order, payload)` in hex: the dedupe key's name, `<prefix>:{J}:dedupe:<hash>` in
    /// the job's partition. For a V2 notification the identity hashed is its `notificationUUID` (Apple-signed, read
    /// at the door), not the body or the JWS: a replay rewrapped in other JSON, or with its signature spelled the
    /// other valid way, is the same job.
    func dedupeHash(_ submission: Submission, source: Job.Source, userID: String?) -> String {
        var hasher = SHA256()
        // The project's id joins a client's parts only outside the default project, so today's dedupe keys stay.
        let user = userID.map { project.isDefault ? $0 : "\(project.rawValue)/\($0)" } ?? ""
        for part in [source.rawValue, user, submission.kind.rawValue, submission.orderNo ?? ""] {
            hasher.update(data: Data(part.utf8))
            hasher.update(data: [0])
        }
        if submission.kind == .notificationV2, let uuid = submission.notificationUUID {
            hasher.update(data: Data("notificationUUID:\(uuid)".utf8))
        } else if submission.kind == .notificationV2, let signed = submission.signed {
            hasher.update(data: Data(signed.utf8))
        } else {
            hasher.update(data: submission.payload)
        }
        return Hex.lowercase(Array(hasher.finalize()))
    }

    /// `?wait=N`: 0 when absent; `400 invalid_request` unless 0 ≤ N ≤ the maximum.
    func waitSeconds(_ request: Request) throws -> Int {
        guard let text = request.uri.queryParameters.get("wait") else { return 0 }
        guard let seconds = Int(text), (0...configuration.maxWaitSeconds).contains(seconds) else {
            throw IngestError.invalidRequest("wait must be an integer number of seconds from 0 to \(configuration.maxWaitSeconds)")
        }
        return seconds
    }

    /// Waits for a final status without holding a Redis connection: registers with ``ResultWaiters``, then
    /// reads the status (closing the race with a result published before registering), and reads again on
    /// every signal until the state is final or the deadline passes.
    func waitForResult(jobID: String, userID: String, deadline: ContinuousClock.Instant) async throws -> Response {
        let id = try await registerWaiter(jobID: jobID, userID: userID)
        return try await waitRegistered(jobID: jobID, waiter: id, deadline: deadline, readFirst: true)
    }

    /// A waiter for `jobID`, or `429 too_many_waiters` when the process or the user has the most allowed.
    private func registerWaiter(jobID: String, userID: String) async throws -> UInt64 {
        guard let id = await waiters.register(jobID: jobID, user: userID) else {
            metrics.reject(reason: "too_many_waiters")
            throw IngestError.tooManyWaiters()
        }
        return id
    }

    /// ``pollUntilFinal(jobID:waiter:deadline:readFirst:)``, then the waiter unregistered whatever happened.
    private func waitRegistered(
        jobID: String, waiter id: UInt64, deadline: ContinuousClock.Instant, readFirst: Bool
    ) async throws -> Response {
        do {
            let response = try await pollUntilFinal(jobID: jobID, waiter: id, deadline: deadline, readFirst: readFirst)
            await waiters.unregister(jobID: jobID, id: id)
            return response
        } catch {
            await waiters.unregister(jobID: jobID, id: id)
            throw error
        }
    }

    /// The final status once there is one; else, at the deadline or when the request's task is cancelled (a
    /// shutdown past its grace), `202` with the last status read. `readFirst: false` when the waiter was
    /// registered before the job was created: nothing can be final before its first signal.
    private func pollUntilFinal(
        jobID: String, waiter id: UInt64, deadline: ContinuousClock.Instant, readFirst: Bool
    ) async throws -> Response {
        var status: JobStatus?
        var read = readFirst
        while true {
            if read {
                status = try await redisRead { try await readStatus(jobID) }
                if let status, status.state.isFinal { return JobStatusBody.response(.ok, status) }
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, !Task.isCancelled else { break }
            let carried = await waiters.nextSignal(jobID: jobID, id: id, timeout: remaining)
            guard !Task.isCancelled else { break }
            // The ledger's final write carries the hash it wrote: answered without reading it back.
            if let carried, let final = JobStatus(jobID: jobID, hash: carried), final.state.isFinal {
                return JobStatusBody.response(.ok, final)
            }
            read = true
        }
        if !read, !Task.isCancelled { status = try await redisRead { try await readStatus(jobID) } }
        guard let status else { return JobStatusBody.queuedResponse(jobID: jobID) }
        return JobStatusBody.response(.accepted, status)
    }

    /// The job's status where ``Keys/locateJob(_:on:)`` finds it (its id's partition, following its `moved.to` chain).
    func readStatus(_ jobID: String) async throws -> JobStatus? {
        try await keys.readJobStatus(jobID, on: redis)
    }
}
