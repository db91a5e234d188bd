package import Pipeline

/// One endpoint's keys in one partition, all in the partition's slot with its events stream (the layout is in
/// `Lua/notifier.lua`).
package struct WebhookKeys: Sendable, Hashable {
    /// The partition's events stream, `tg:{p0}:events`.
    package let stream: String
    /// `tg:{p0}:webhook:<endpoint>`, the start of the others.
    package let base: String
    package let partition: Partition

    package var due: String { base + ":due" }
    package var attempts: String { base + ":attempts" }
    package var cursor: String { base + ":cursor" }
    package var waiting: String { base + ":waiting" }
    /// The endpoint's dead letters in this partition (capped: ``WebhookDeliveryConfiguration/deadMax``).
    package var dead: String { base + ":dead" }
    /// Subject → the write time (ms) of its newest entry admitted: lets `pull` forget the cursors of subjects with
    /// nothing pending.
    package var seen: String { base + ":seen" }

    /// What the endpoint's replicas share (``NotifierFunctions/fleet(on:keys:consumer:now:ttl:openUntil:)``): the
    /// replicas alive and the open breaker. Replicas read the first partition's.
    package var fleet: (replicas: String, breaker: String) { (base + ":replicas", base + ":breaker") }

    /// The lease of the one delivery in flight to this endpoint for `subject` (a user, or ``WebhookEvent/appSubject``).
    package func lease(_ subject: String) -> String { base + ":lease:" + subject }
}

extension Keys {
    /// The keys of `endpoint` (a ``WebhookEndpoint/name``) in `partition`.
    package func webhook(_ endpoint: String, partition: Partition) -> WebhookKeys {
        WebhookKeys(
            stream: events(partition: partition).stream, base: partitionKey(partition, "webhook", endpoint), partition: partition)
    }
}
