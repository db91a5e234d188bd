import Logging
import Redis
import ServiceLifecycle

/// One subscription per process to the job-results channel (`tg:job-results`), fanning published job ids
/// out to ``ResultWaiters``. Runs until graceful shutdown.
struct ResultListener: Service, CustomStringConvertible {
    let subscriber: RedisSubscriber
    let waiters: ResultWaiters
    let logger: Logger
    var description: String { "ResultListener" }

    func run() async throws {
        subscriber.start()
        await withGracefulShutdownHandler {
            for await event in subscriber.events {
                switch event {
                case .subscribed:
                    logger.debug("job results subscription ready")
                    await waiters.signalAll()
                case .message(_, let payload):
                    await waiters.signal(jobID: String(decoding: payload, as: UTF8.self))
                }
            }
        } onGracefulShutdown: {
            subscriber.close()
        }
    }
}
