package import AppStore
package import Core
package import Foundation
package import Ledger
import Pipeline
package import ServiceKit

/// The settings of `ingest`, read from the environment by ``init(environment:)`` and validated at startup.
///
/// Keys (besides ``SharedConfiguration``'s `TOLLGATE_REDIS_URL`, `TOLLGATE_KEY_PREFIX`, `LOG_LEVEL` and
/// `TOLLGATE_SHUTDOWN_GRACE`, here `40s` by default: ``defaultShutdownGrace``):
/// - `TOLLGATE_BUNDLE_ID` (required), `TOLLGATE_ENVIRONMENT`, `TOLLGATE_APP_APPLE_ID`, `TOLLGATE_ACCEPT_SANDBOX` — the
///   app (``AppStore/AppIdentity``), as the verifier reads them: a V2 notification for another app, or from an
///   environment the deployment does not take, is refused at the door with its code and nothing is stored
/// - `TOLLGATE_DOOR_CHAIN_CHECKS_PER_SECOND`, `TOLLGATE_DOOR_CHAIN_CHECK_BURST` — certificate checks per second (and
///   burst) this process spends on anonymous notifications whose certificate chain it has never seen (`10`, `20`):
///   each costs a P-384 signature check, more than a whole forged request on a known chain. Past them such a
///   notification is answered `503 chain_check_deferred` (Apple retries); known chains are unaffected
/// - `TOLLGATE_HTTP_HOST` — address to listen on (`127.0.0.1`)
/// - `TOLLGATE_HTTP_PORT` — port to listen on, 0–65535 (`8080`)
/// - `TOLLGATE_CATALOG` — catalog JSON path; unset serves an empty catalog and refuses every order with
///   `unknown_product`
/// - `TOLLGATE_CLIENT_JWT_SECRET` — HS256 secret of user tokens, at least 32 bytes. Unset: user endpoints answer
///   `401 unauthorized` and a warning is logged at startup (so that a notifications-only deployment runs)
/// - `TOLLGATE_CLIENT_JWT_ISSUER`, `TOLLGATE_CLIENT_JWT_AUDIENCE` — when set, a user token's `iss` must equal it and
///   its `aud` must contain it
/// - `TOLLGATE_CLIENT_JWT_MAX_LIFETIME` — the longest a user token may live (`24h`): `exp` no further ahead, and
///   `exp − iat` no longer
/// - `TOLLGATE_SERVICE_KEYS` — comma-separated service API keys, each `name:scope+scope:key` or a bare key (every
///   scope) (none; ``ServiceKey``)
/// - `TOLLGATE_SERVICE_KEY_RATE`, `TOLLGATE_SERVICE_KEY_BURST`, `TOLLGATE_SERVICE_KEY_MAX_IN_FLIGHT` — each service
///   key's calls that make a job asking Apple (`GET /v1/lookup?orderId=`, `POST /v1/admin/apple/…`): per second
///   (fractional allowed) and burst (fleet-wide token bucket in Redis; `1` and `10`, past them `429 key_rate_limited`
///   with `Retry-After`), and unfinished jobs (`10`; 0: no limit; past it `429 key_too_many_in_flight`)
/// - `TOLLGATE_SERVICE_KEY_LIMITS` — other bounds for named keys, `name=rate/burst/inFlight` comma-separated (e.g.
///   `support=0.5/5/2`); a name no key has is refused at start (``ServiceKeyLimits``)
/// - `TOLLGATE_MAX_BACKLOG_SERVICE`, `TOLLGATE_BACKLOG_BYTES_SERVICE` — the service keys' unfinished jobs and bytes,
///   a budget of their own apart from the app users' (`1000`, `4194304` = 4 MiB; 0: no limit); past it `503`
/// - `TOLLGATE_V1_NOTIFICATIONS` — accept Apple's V1 notifications (`false`); needs `TOLLGATE_SHARED_SECRET`,
///   which each V1 body's `password` must equal. A V1 notification is only a trigger: the verifier credits what
///   Apple answers for its `latest_receipt`
/// - `TOLLGATE_MAX_BACKLOG` — unfinished jobs of one source (Apple's notifications, or the clients' submissions)
///   at which that source's enqueues answer `503 overloaded` (`100000`; 0: no limit). Each source has its own
///   budget, so that a flood of one never refuses the other
/// - `TOLLGATE_BACKLOG_BYTES_APPLE`, `TOLLGATE_BACKLOG_BYTES_CLIENT` — unfinished payload bytes of each source at
///   which its enqueues answer `503` (`268435456` = 256 MiB, `134217728` = 128 MiB; 0: no limit, else at least
///   2 MiB so that the largest submission fits)
/// - `TOLLGATE_USER_MAX_IN_FLIGHT` — a user's unfinished receipt/transaction jobs at which more answer
///   `429 too_many_in_flight` (`10`; 0: no limit)
/// - `TOLLGATE_USER_RATE`, `TOLLGATE_USER_BURST` — a user's submissions per second and burst (fleet-wide token
///   bucket in Redis; `2` and `20`); past them `429 rate_limited` with `Retry-After`
/// - `TOLLGATE_MAX_PENDING_ORDERS` — a user's unpaid orders at which `POST /v1/orders` answers
///   `429 too_many_pending_orders` (`10`)
/// - `TOLLGATE_ORDER_TTL` — how long an unpaid order (and its `appAccountToken` mapping) lives (`7d`; a paid
///   order is kept)
/// - `TOLLGATE_MAX_RECEIPT_BYTES` — largest receipt accepted, base64 characters (`524288`: about 1,000 purchases;
///   a receipt is ~6.4 K characters plus ~0.5 K per transaction it holds, measured on Apple-signed receipts)
/// - `TOLLGATE_MAX_WAITERS`, `TOLLGATE_USER_MAX_WAITERS` — `?wait=` requests held at once by this process and
///   by one user (`4096`, `4`); past them `429 too_many_waiters`
/// - `TOLLGATE_HTTP_IDLE_TIMEOUT` — a connection with no request in progress is closed after this long
///   (`30s`; slow senders of headers too)
/// - `TOLLGATE_HTTP_BODY_TIMEOUT` — a request body must arrive within this long (`10s`), else `408`
/// - `TOLLGATE_ROOT_CERTS` — comma-separated DER or PEM files of the roots Apple's signatures must chain to (Apple
///   Root CA - G3, built in). A V2 notification, or a client's signed transaction, whose signature does not
///   verify under a leaf chaining to one of them is refused (`401 invalid_signature`) and nothing is stored
/// - `TOLLGATE_OFFER_KEY_ID`, `TOLLGATE_OFFER_ISSUER_ID`, `TOLLGATE_OFFER_PRIVATE_KEY_PATH` — the subscription-offer key
///   (App Store Connect's In-App Purchase key, a `.p8` file; not the App Store Server API key) that signs
///   promotional offers, with `TOLLGATE_BUNDLE_ID`. All or none; unset, `POST /v1/offers/promotional` answers
///   `501 offers_not_configured`
/// - `TOLLGATE_OPS_HOST`, `TOLLGATE_OPS_PORT` — the operators' listener for `/healthz`, `/readyz` and `/metrics`
///   (`127.0.0.1`; unset port: no such listener). They are never on the public listener unless
///   `TOLLGATE_OPS_ON_PUBLIC_LISTENER=true` asks for it (a machine where only operators reach ingest's port);
///   without either, ingest starts with a warning and serves them nowhere
/// - `TOLLGATE_ENQUEUE_QUEUE_LIMIT` — enqueues waiting for a Redis round trip above which `503` (`10000`)
/// - `TOLLGATE_ENQUEUE_BATCH_SIZE` — most jobs in one pipelined round trip (`256`)
/// - `TOLLGATE_ENQUEUE_BATCH_BYTES` — most argument bytes in one round trip, at least one job (`16384`, Redis'
///   read size per client and event-loop iteration; see ``EnqueueBatcher``)
/// - `TOLLGATE_ENQUEUE_ROUND_TRIPS` — enqueue round trips in flight at once, each on its own pooled connection
///   (`64`, 1–256); the pool has 4 more connections for reads
/// - `TOLLGATE_REDIS_WAIT_REPLICAS` — replicas that must acknowledge each enqueue (`WAIT`) (`0`)
/// - `TOLLGATE_REDIS_WAIT_TIMEOUT_MS` — how long `WAIT` may take (`1000`)
/// - `TOLLGATE_COIN_GRANTS` — `true` lets `POST /v1/users/{userId}/grants` grant coins (`false`: a coin grant is
///   refused with `403 coin_grants_disabled`)
/// - `TOLLGATE_SANDBOX_VALUE` — `testers` (the default) or `everyone`: whose sandbox side (a production deployment's App
///   Review and TestFlight purchases, ``Pipeline/LedgerSide``) counts as production value. `testers`: a spend draws
///   sandbox coins only for a tester (``Ledger/Testers``, `PUT /v1/admin/testers/{userId}`) or a request with
///   `allowSandbox: true`, the buyer's entitlements read merges the sandbox side only for a tester (everyone else gets
///   it in its own `sandbox` block), and offer eligibility counts it only for a tester. `everyone`: as before 0.10
///   (docs/ARCHITECTURE.md, invariant 11)
/// - `TOLLGATE_USER_EVENTS_RETENTION_DAYS` / `TOLLGATE_USER_EVENTS_CAP` — as the fulfiller's (``Ledger/UserEventLog``):
///   the grant and coin spend events ingest writes to a user's own log keep the same bounds
/// - `TOLLGATE_REDIS_COMMAND_TIMEOUT_MS` — per-command timeout, short so that a dead Redis gives a quick `503`
///   (`2000`)
package struct IngestConfiguration: Sendable {
    package var shared: SharedConfiguration
    /// The apps whose notifications the door takes (`TOLLGATE_APPS`, or the one-app shorthand).
    package var app: AppIdentity
    package var doorChainChecksPerSecond = 10.0
    package var doorChainCheckBurst = 20
    package var host = "127.0.0.1"
    package var port = 8080
    /// The default project's catalog and user-token secret.
    package var catalog: Catalog
    package var clientJWTSecret: String?
    /// The other projects of `TOLLGATE_APPS` (docs/PROJECTS.md), each with its catalog and user-token secret.
    package var projects: [ProjectSettings] = []
    package var serviceKeys: [ServiceKey] = []
    package var clientJWTIssuer: String?
    package var clientJWTAudience: String?
    package var clientJWTMaxLifetime: Duration = .seconds(86_400)
    /// The shared secret V1 notifications must carry; nil: V1 notifications are refused.
    package var v1SharedSecret: String?
    /// With `TOLLGATE_APPS`: each app's shared secret, which a V1 notification naming that app (`bid`) must carry;
    /// ``v1SharedSecret`` is then unused.
    package var v1SharedSecrets: [String: String] = [:]
    package var maxBacklog = 100_000
    package var backlogBytesApple = 256 << 20
    package var backlogBytesClient = 128 << 20
    /// Each service key's rate and unfinished jobs (``ServiceKeyLimits``).
    package var serviceKeyLimits = ServiceKeyLimits()
    /// The service keys' backlog budget (jobs, bytes), apart from the app users' (`Job.Budget.service`).
    package var maxBacklogService = 1000
    package var backlogBytesService = 4 << 20
    package var userMaxInFlight = 10
    package var userRatePerSecond = 2.0
    package var userBurst = 20
    package var maxPendingOrders = 10
    /// Whether service keys with the `grant` scope may grant coins (`TOLLGATE_COIN_GRANTS`).
    package var coinGrants = false
    /// `TOLLGATE_SANDBOX_VALUE`: whose sandbox side counts as production value.
    package var sandboxValue = SandboxValue.testers
    /// The bounds of each user's own event log, for the grant and coin spend events ingest writes.
    package var userEventLog = UserEventLog()
    package var orderLifetime: Duration = .seconds(7 * 86_400)
    package var maxReceiptBytes = 512 << 10
    package var maxWaiters = 4096
    package var userMaxWaiters = 4
    package var idleTimeout: Duration = .seconds(30)
    package var bodyTimeout: Duration = .seconds(10)
    /// Trusted roots (DER) of the signature check at the door.
    package var rootCertificates: [Data] = [AppleRootCertificates.appleRootCAG3]
    /// The (default) app's subscription-offer key; nil: its promotional offers are not signed.
    package var offerKey: OfferSigningKey?
    /// The other apps' offer keys (`TOLLGATE_APPS`), each signing for its own bundle ID.
    package var additionalOfferKeys: [OfferSigningKey] = []
    package var opsHost = "127.0.0.1"
    /// The operators' listener port; nil: `/healthz`, `/readyz`, `/metrics` have no listener of their own.
    package var opsPort: Int?
    /// Serve the operators' endpoints on the public listener (only when `opsPort` is nil).
    package var opsOnPublicListener = false
    package var enqueueQueueLimit = 10_000
    package var enqueueBatchSize = 256
    package var enqueueBatchBytes = 16_384
    package var enqueueRoundTrips = 64
    /// The multiplexed pool carries every round trip pipelined; with `TOLLGATE_REDIS_WAIT_REPLICAS` each
    /// enqueue round trip ends with a `WAIT`, which holds its connection, so then one each plus 4 for the rest.
    package var redisPoolSize: Int { waitReplicas > 0 ? enqueueRoundTrips + 4 : shared.redisConnections }
    package var waitReplicas = 0
    package var waitTimeoutMilliseconds = 1000
    /// Longest `?wait=` a client may ask for, in seconds.
    package var maxWaitSeconds = 30
    /// Ingest's default `TOLLGATE_SHUTDOWN_GRACE`: the longest `?wait=` (30 s) with room to answer, below
    /// compose's `stop_grace_period` of 45 s.
    package static let defaultShutdownGrace = Duration.seconds(40)
    /// How often the jobs stream's backlog is sampled.
    package var backlogSampleInterval: Duration = .milliseconds(500)

    package init(shared: SharedConfiguration = SharedConfiguration(), app: AppIdentity, catalog: Catalog) {
        self.shared = shared
        self.app = app
        self.catalog = catalog
    }

    /// A project other than the default one, as ingest serves it.
    package struct ProjectSettings: Sendable {
        package var id: ProjectID
        package var catalog: Catalog
        /// Never logged.
        package var clientJWTSecret: String
    }

    /// The bundle IDs of each project's apps, when `TOLLGATE_APPS` lists projects (empty: one project, every app).
    package var projectApps: [ProjectID: [String]] = [:]

    /// The apps of `project` (every app of the deployment without projects): the only ones its users' offers may name.
    package func bundleIds(of project: ProjectID) -> [String] {
        projectApps.isEmpty ? [app.bundleId] + app.additionalApps.map(\.bundleId) : projectApps[project] ?? []
    }

    /// The catalog of `project` (empty for a project this ingest does not know: no user of it can authenticate).
    package func catalog(of project: ProjectID) -> Catalog {
        project.isDefault ? catalog : projects.first { $0.id == project }?.catalog ?? .empty
    }
}
