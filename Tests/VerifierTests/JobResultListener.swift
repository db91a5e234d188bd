import Logging
import Pipeline
import Redis
import TestSupport

/// Listens on the job-results channel (`tg:job-results`) the way ingest's `?wait=` does.
final class JobResultListener: Sendable {
    let subscriber: RedisSubscriber

    private init(subscriber: RedisSubscriber) {
        self.subscriber = subscriber
    }

    /// Subscribes and returns once the subscription is confirmed.
    static func start(_ harness: VerifierHarness) async throws -> JobResultListener {
        let subscriber = RedisSubscriber(
            configuration: harness.redisServer.configuration(), channels: [harness.keys.jobResultsChannel],
            logger: testLogger)
        subscriber.start()
        let listener = JobResultListener(subscriber: subscriber)
        guard case .subscribed = try await listener.next(timeout: .seconds(5)) else {
            throw ChildProcess.Failure(description: "no subscription confirmation")
        }
        return listener
    }

    /// The next event, or nil after `timeout` (a timeout cancels the waiting read, which ends the stream:
    /// use the listener no further after a nil).
    func next(timeout: Duration) async throws -> RedisSubscriber.Event? {
        let events = subscriber.events
        return try await withThrowingTaskGroup(of: RedisSubscriber.Event?.self) { group in
            group.addTask {
                var iterator = events.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The job ids announced within `timeout` (stops at the first quiet `timeout`): each message is
    /// `<job id>\n<the job hash as JSON>` (`Lua/jobs.lua`'s `write_status`).
    func announced(timeout: Duration = .seconds(3), until jobID: String) async throws -> [String] {
        var ids: [String] = []
        while let event = try await next(timeout: timeout) {
            if case .message(_, let payload) = event {
                ids.append(String(decoding: payload.prefix { $0 != 0x0a }, as: UTF8.self))
                if ids.last == jobID { break }
            }
        }
        return ids
    }

    func stop() {
        subscriber.close()
    }
}
