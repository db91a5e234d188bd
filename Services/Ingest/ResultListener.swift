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
        // Each message is handled on the subscription's thread, waking its waiters directly (no listener task between).
        subscriber.start(deliveringTo: { [waiters] event in Self.deliver(event, to: waiters) })
        await withGracefulShutdownHandler {
            for await _ in subscriber.events {}
        } onGracefulShutdown: {
            subscriber.close()
        }
    }

    static func deliver(_ event: RedisSubscriber.Event, to waiters: ResultWaiters) {
        switch event {
        case .subscribed:
            waiters.signalAll()
        case .message(_, let payload):
            // `<job id>` alone, or `<job id>\n<the job hash as a JSON object>` (the ledger's final write).
            if let newline = payload.firstIndex(of: 0x0a) {
                waiters.signal(
                    jobID: String(decoding: payload[..<newline], as: UTF8.self), carrying: Array(payload[(newline + 1)...]))
            } else {
                waiters.signal(jobID: String(decoding: payload, as: UTF8.self))
            }
        }
    }
}
