package import Logging
package import Redis
package import ServiceLifecycle

extension StreamConsumer {
    /// A worker's stream work as the verifier and the fulfiller run it: the consumer of `configuration`'s streams (every
    /// partition's), the ``RetryPromoter`` that moves their due retries back every `promoteEvery`, and the
    /// ``StreamJanitor`` that bounds them — three services to run in the worker's group, built in one place so that
    /// no worker forgets one.
    package static func withUpkeep(
        configuration: StreamConsumerConfiguration, redis: some RedisClient, promoteEvery: Duration,
        clock: PipelineClock = .system, metrics: MetricHandles, logger: Logger,
        deadLetterWrites: @escaping DeadLetterWrites, handler: @escaping Handler
    ) -> [any Service] {
        let streams = configuration.streams.map(\.keys)
        return [
            StreamConsumer(
                configuration: configuration, redis: redis, clock: clock, metrics: metrics, logger: logger,
                deadLetterWrites: deadLetterWrites, handler: handler),
            RetryPromoter(streams: streams, redis: redis, interval: promoteEvery, metrics: metrics, logger: logger),
            StreamJanitor(streams: streams, redis: redis, metrics: metrics, logger: logger),
        ]
    }
}
