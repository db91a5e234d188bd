package import Pipeline

/// How a ``WebhookDelivery`` schedules, leases and retries. Defaults suit production; tests shorten the times.
package struct WebhookDeliveryConfiguration: Sendable {
    /// Requests in flight to one endpoint from all replicas together: each replica takes its share, this divided by
    /// the replicas alive (rounded up, at least one), which it learns every `fleetInterval`.
    package var concurrency = 16
    /// How often a replica tells the others it is alive and learns how many there are and whether one of them has
    /// opened the endpoint's breaker (at once when its own opens). A replica not heard from for `lease` is gone.
    package var fleetInterval: Duration = .seconds(1)
    /// Entries admitted from a stream per call.
    package var batch = 100
    /// The lease of a subject while its delivery is in flight; a crashed replica's entry is sent again once it
    /// ends. Must be longer than the request timeout (checked at startup).
    package var lease: Duration = .seconds(30)
    /// How soon a blocked entry (an earlier seq unfinished) is looked at again if nothing wakes it first. Only a
    /// safety net: the `finish` of seq-1 wakes it at once (the two are ordered by the cursor, in one slot), so
    /// long is cheap and right.
    package var recheck: Duration = .seconds(300)
    /// How long the loop sleeps when there was nothing to admit or send: `pollMinimum` after a round that found
    /// work, doubling with each empty round up to `pollInterval` (an idle notifier asks 5 times a second, a busy one
    /// every 25 ms). At 300 purchases/s (`scripts/bench-webhooks`, docs/BENCHMARKS.md) a fixed 200 ms poll gave a
    /// ledger-write-to-2xx p99 of 214 ms; 25 ms gives 40 ms; 2 ms gives 21 ms but doubles the notifier's CPU per
    /// event (smaller batches, more rounds).
    package var pollInterval: Duration = .milliseconds(200)
    package var pollMinimum: Duration = .milliseconds(25)
    /// Failed deliveries are retried until the event is this old, then dead-lettered; an event this old is
    /// dead-lettered even while the endpoint's breaker is open (nothing sent).
    package var horizon: Duration = .seconds(72 * 3600)
    /// About how many dead letters an endpoint keeps per partition (`MAXLEN ~`: whole stream nodes of the oldest
    /// go); what the cap drops is counted in `tollgate_webhook_dead_dropped_total` (the events stay readable in each
    /// user's event log, `GET /v1/users/{userId}/events`).
    package var deadMax = 10_000
    /// The backoff between attempts (full jitter; its attempt limit is not used: the horizon decides).
    package var retry = RetryPolicy(base: .seconds(1), cap: .seconds(600), maxAttempts: Int.max)
    /// Failed attempts in a row that open an endpoint's breaker, and how long it first stays open.
    package var breakerThreshold = 5
    package var breakerCooldown: Duration = .seconds(5)
    package var breakerMaximumCooldown: Duration = .seconds(300)

    package init() {}
}
