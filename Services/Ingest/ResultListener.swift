import Logging
import Redis
import ServiceLifecycle

/// One subscription per process to the job-results channel (`tg:job-results`), fanning published job ids (and
/// the status a message carries) out to ``ResultWaiters``. Runs until graceful shutdown.
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
                    // `<job id>\n<the job hash as a JSON object>`: what `Lua/jobs.lua`'s one status writer publishes for a
                    // final state. A bare `<job id>` (a writer of an older release, during a rollout) only signals.
                    if let newline = payload.firstIndex(of: 0x0a) {
                        await waiters.signal(
                            jobID: String(decoding: payload[..<newline], as: UTF8.self),
                            carrying: Array(payload[(newline + 1)...]))
                    } else {
                        await waiters.signal(jobID: String(decoding: payload, as: UTF8.self))
                    }
                }
            }
        } onGracefulShutdown: {
            subscriber.close()
        }
    }
}
