package import Core
package import Ledger
package import Pipeline
package import ServiceKit

/// The fulfiller's settings, read from the environment by ``init(environment:)``.
///
/// Keys (besides the shared `TOLLGATE_REDIS_URL`, `TOLLGATE_KEY_PREFIX`, `LOG_LEVEL`, `TOLLGATE_SHUTDOWN_GRACE`):
/// - `TOLLGATE_CATALOG` — path of the catalog JSON (required), validated at startup; with projects in
///   `TOLLGATE_APPS` (docs/PROJECTS.md) each project's catalog comes from that file instead, and this may not be set
/// - `TOLLGATE_CLAMP_REFUNDS` — `true` clamps balances at 0 on refunds and records the shortfall (`false`)
/// - `TOLLGATE_METRICS_HOST` / `TOLLGATE_METRICS_PORT` — `/metrics` and `/healthz` listener (`0.0.0.0`, 9091)
/// - `TOLLGATE_FULFILLER_CONCURRENCY` — events applied at once per replica (16)
/// - `TOLLGATE_CLAIM_MIN_IDLE_MS` — entries of a crashed replica are reclaimed after this idle time (30000)
/// - `TOLLGATE_CLAIM_INTERVAL_MS` — how often idle entries are looked for (5000)
/// - `TOLLGATE_REDIS_WAIT_REPLICAS` / `TOLLGATE_REDIS_WAIT_TIMEOUT_MS` — with several partitions, replicas that must
///   acknowledge each cross-partition step (a chain's claim, a hand-over) before the step that depends on it runs on
///   another primary (`0`: none; `1000` ms)
/// - `TOLLGATE_EVENTS_RETENTION_HOURS` — outbound events older than this are trimmed from the events stream
///   (168 = 7 days; `0` keeps them forever — with `noeviction`, Redis then fills up and refuses writes)
/// - `TOLLGATE_REPEAT_FREE_TRIAL` — `allow` (the default) or `refuse`: under `refuse` a user's second introductory
///   free trial in a subscription group (another Apple ID's) is recorded but grants no access until its first paid
///   period (``Ledger/RepeatFreeTrial``)
/// - `TOLLGATE_EVENTS_GROUP_IDLE_LIMIT_HOURS` — a consumer group of the events streams whose readers have been gone
///   this long stops holding entries for the trim (168; `0`: never); alert `TollgateEventsConsumerIdle` fires at a day
/// - `TOLLGATE_EVENTS_MAX_MB` — an events stream past this many megabytes loses its oldest entries, read or not, so
///   that events never make Redis refuse the ledger's writes (1024 per partition; `0`: no cap); counted in
///   `tollgate_events_dropped_total`, alerted at 70 %
/// - `TOLLGATE_USER_EVENTS_RETENTION_DAYS` / `TOLLGATE_USER_EVENTS_CAP` — each user's own event log, read by
///   `GET /v1/users/{id}/events`: kept this many days after the user's last event (90), the newest this many (1000)
///   (``Ledger/UserEventLog``)
package struct FulfillerConfiguration: Sendable {
    package var shared: SharedConfiguration
    /// The default project's catalog.
    package var catalog: Catalog
    /// The other projects' catalogs (`TOLLGATE_APPS` with projects, docs/PROJECTS.md).
    package var projectCatalogs: [ProjectID: Catalog] = [:]
    package var clampRefunds = false
    package var metricsHost = "0.0.0.0"
    package var metricsPort = 9091
    package var concurrency = 16
    package var claimMinIdle: Duration = .seconds(30)
    package var claimInterval: Duration = .seconds(5)
    package var retry = RetryPolicy()
    /// Replicas that must acknowledge a claim or hand-over (``LedgerApplier/Durability``).
    package var waitReplicas = 0
    package var waitTimeoutMilliseconds = 1000
    /// How long outbound events stay in the events stream; nil keeps them forever.
    package var eventsRetention: Duration? = .seconds(7 * 24 * 3600)
    /// The events streams' idle-group limit and byte cap.
    package var eventsBounds = StreamBounds(groupIdleLimit: .seconds(168 * 3600), maxBytes: 1024 * 1_048_576)
    /// What a second introductory free trial of a user and subscription group grants.
    package var repeatFreeTrial = RepeatFreeTrial.allow
    /// What each user's own event log keeps.
    package var userEventLog = UserEventLog()

    package init(shared: SharedConfiguration, catalog: Catalog) {
        self.shared = shared
        self.catalog = catalog
    }
}
