import Pipeline
package import ServiceKit
package import Webhooks

/// The notifier's settings, read from the environment by ``init(environment:)``.
///
/// Keys (besides the shared `TOLLGATE_REDIS_URL`, `TOLLGATE_KEY_PREFIX`, `TOLLGATE_PARTITIONS`, `LOG_LEVEL`,
/// `TOLLGATE_SHUTDOWN_GRACE`, and the endpoints of ``Webhooks/WebhookSettings``: `TOLLGATE_WEBHOOK_URL` +
/// `TOLLGATE_WEBHOOK_SECRETS` or `TOLLGATE_WEBHOOKS`, `TOLLGATE_WEBHOOK_ALLOW_HTTP`, `TOLLGATE_WEBHOOK_TIMEOUT`):
/// - `TOLLGATE_WEBHOOK_HORIZON` — failed deliveries are retried until the event is this old, then dead-lettered (`72h`)
/// - `TOLLGATE_WEBHOOK_CONCURRENCY` — requests in flight per endpoint, all replicas together (each takes its share), 1-1024 (16)
/// - `TOLLGATE_WEBHOOK_LEASE` — a user's delivery lease; a crashed replica's delivery is retried when it ends; longer
///   than the timeout (`30s`)
/// - `TOLLGATE_WEBHOOK_RETRY_CAP` — the longest pause between two attempts (`10m`; full jitter from 1 s doubling)
/// - `TOLLGATE_WEBHOOK_BREAKER_THRESHOLD` — failed attempts in a row (no answer, 408, 429, 5xx) that open an endpoint's
///   breaker in a replica, 1-1000 (5); it probes again after `5s`, doubling to 5 minutes
/// - `TOLLGATE_WEBHOOK_POLL_MS` — the longest sleep of an idle notifier before it looks at the events streams again,
///   1-10000 (200); `TOLLGATE_WEBHOOK_POLL_MIN_MS` — its first sleep after a round that found work, doubling while
///   nothing comes (25): lower is lower latency for more CPU per event
/// - `TOLLGATE_WEBHOOK_DEAD_MAX` — about how many dead letters an endpoint keeps per partition (`MAXLEN ~`: the oldest
///   go, counted in `tollgate_webhook_dead_dropped_total`), 1-100000000 (10000)
/// - `TOLLGATE_METRICS_HOST` / `TOLLGATE_METRICS_PORT` — `/metrics` and `/healthz` listener (`0.0.0.0`, 9092)
package struct NotifierConfiguration: Sendable {
    package var shared: SharedConfiguration
    package var webhooks: WebhookSettings
    package var delivery = WebhookDeliveryConfiguration()
    package var metricsHost = "0.0.0.0"
    package var metricsPort = 9092

    package init(shared: SharedConfiguration, webhooks: WebhookSettings) {
        self.shared = shared
        self.webhooks = webhooks
    }
}
