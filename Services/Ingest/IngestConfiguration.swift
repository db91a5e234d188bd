import Ledger
import Pipeline

/// The settings of `ingest`, read from the environment by ``init(environment:)`` and validated at startup.
///
/// Keys (besides ``SharedConfiguration``'s `TOLLGATE_REDIS_URL`, `TOLLGATE_KEY_PREFIX`, `LOG_LEVEL`):
/// - `TOLLGATE_HTTP_HOST` — address to listen on (`127.0.0.1`)
/// - `TOLLGATE_HTTP_PORT` — port to listen on, 0–65535 (`8080`)
/// - `TOLLGATE_CATALOG` — catalog JSON path; unset serves an empty catalog and refuses every order with
///   `unknown_product`
/// - `TOLLGATE_CLIENT_JWT_SECRET` — HS256 secret of user tokens, at least 32 bytes. Unset: user endpoints answer
///   `401 unauthorized` and a warning is logged at startup (so that a notifications-only deployment runs)
/// - `TOLLGATE_SERVICE_KEYS` — comma-separated service API keys (none)
/// - `TOLLGATE_V1_NOTIFICATIONS` — accept Apple's V1 notifications (`false`); needs `TOLLGATE_SHARED_SECRET`,
///   which each V1 body's `password` must equal. A V1 notification is only a trigger: the verifier credits what
///   Apple answers for its `latest_receipt`
/// - `TOLLGATE_MAX_BACKLOG` — jobs not yet delivered to the verifiers above which enqueues answer `503`
///   (`100000`; 0 turns the check off)
/// - `TOLLGATE_ENQUEUE_QUEUE_LIMIT` — enqueues waiting for a Redis round trip above which `503` (`10000`)
/// - `TOLLGATE_ENQUEUE_BATCH_SIZE` — most jobs in one pipelined round trip (`256`)
/// - `TOLLGATE_ENQUEUE_BATCH_BYTES` — most argument bytes in one round trip, at least one job (`16384`, Redis'
///   read size per client and event-loop iteration; see ``EnqueueBatcher``)
/// - `TOLLGATE_ENQUEUE_ROUND_TRIPS` — enqueue round trips in flight at once, each on its own pooled connection
///   (`64`, 1–256); the pool has 4 more connections for reads
/// - `TOLLGATE_REDIS_WAIT_REPLICAS` — replicas that must acknowledge each enqueue (`WAIT`) (`0`)
/// - `TOLLGATE_REDIS_WAIT_TIMEOUT_MS` — how long `WAIT` may take (`1000`)
/// - `TOLLGATE_REDIS_COMMAND_TIMEOUT_MS` — per-command timeout, short so that a dead Redis gives a quick `503`
///   (`2000`)
public struct IngestConfiguration: Sendable {
    public var shared: SharedConfiguration
    public var host = "127.0.0.1"
    public var port = 8080
    public var catalog: Catalog
    public var clientJWTSecret: String?
    public var serviceKeys: [String] = []
    /// The shared secret V1 notifications must carry; nil: V1 notifications are refused.
    public var v1SharedSecret: String?
    public var maxBacklog = 100_000
    public var enqueueQueueLimit = 10_000
    public var enqueueBatchSize = 256
    public var enqueueBatchBytes = 16_384
    public var enqueueRoundTrips = 64
    /// Enqueue round trips plus 4 connections for reads and readiness checks.
    public var redisPoolSize: Int { enqueueRoundTrips + 4 }
    public var waitReplicas = 0
    public var waitTimeoutMilliseconds = 1000
    /// Longest `?wait=` a client may ask for, in seconds.
    public var maxWaitSeconds = 30
    /// How often the jobs stream's backlog is sampled.
    public var backlogSampleInterval: Duration = .milliseconds(500)

    public init(shared: SharedConfiguration = SharedConfiguration(), catalog: Catalog) {
        self.shared = shared
        self.catalog = catalog
    }
}
