import CHiredis
import Core
import Foundation
package import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pub/sub subscription on its own dedicated thread and hiredis context, delivering messages to
/// ``events``.
///
/// The thread connects (with the configured connect timeout, AUTH, SELECT and CLIENT SETNAME), sends
/// `SUBSCRIBE` for every channel and yields ``Event/subscribed`` once all are confirmed, then delivers each
/// message as ``Event/message(channel:payload:)``. After a lost connection it reconnects with capped,
/// jittered backoff (to the next of the configuration's seeds: on a Redis Cluster any node hears every `PUBLISH`)
/// and subscribes again, yielding ``Event/subscribed`` again: messages published while it was
/// away are lost (pub/sub keeps nothing), so a consumer should re-check what it waits for on that event.
/// An idle connection is probed with `PING` every `pingInterval`; no answer within another interval counts as
/// a lost connection. ``close()`` ends the thread within ~100 ms and finishes the stream.
package final class RedisSubscriber: Sendable {
    /// What the subscription delivers.
    package enum Event: Sendable, Hashable {
        /// Every channel is (again) subscribed; anything published before is not delivered.
        case subscribed
        /// A message published on a subscribed channel.
        case message(channel: String, payload: [UInt8])
    }

    /// The subscription's events, in order; finishes after ``close()``.
    package let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let closed = Mutex(false)
    private let configuration: RedisConfiguration
    private let channels: [String]
    private let logger: Logger
    private let pingInterval: Duration

    package init(
        configuration: RedisConfiguration, channels: [String], pingInterval: Duration = .seconds(15),
        logger: Logger
    ) {
        self.configuration = configuration
        self.channels = channels
        self.logger = logger
        self.pingInterval = pingInterval
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(65_536))
    }

    /// Starts the subscription thread (call once).
    package func start() {
        let thread = Thread { [self] in
            setCurrentThreadName("tg-redis-sub")
            var loop = SubscriberLoop(
                configuration: configuration, channels: channels, logger: logger,
                pingInterval: pingInterval, isClosed: { self.isClosed },
                deliver: { self.continuation.yield($0) })
            loop.run()
            self.continuation.finish()
        }
        thread.start()
    }

    /// Stops the thread and finishes ``events``.
    package func close() {
        closed.withLock { $0 = true }
    }

    var isClosed: Bool { closed.withLock { $0 } }
}
