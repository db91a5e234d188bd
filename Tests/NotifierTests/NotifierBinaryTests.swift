import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

/// The real `notifier` executable, configured only through its environment.
@Suite(.timeLimit(.minutes(1)))
struct NotifierBinaryTests {
    @Test func theExecutableDeliversFromEveryPartitionAndStopsOnSIGTERM() async throws {
        try await NotifierRig.with(partitions: 4) { rig in
            try await withStubServer { receiver in
                await receiver.respond(to: "/hook", with: [StubResponse(status: 204)])
                var written: [ContractEventWriter.Written] = []
                for user in ["alice", "bob", "carol", "dave"] { written.append(try await rig.writer.append(user: user)) }
                let notifier = try ChildProcess.start(
                    "notifier",
                    environment: [
                        "TOLLGATE_REDIS_URL": rig.server.url, "TOLLGATE_PARTITIONS": "4", "TOLLGATE_METRICS_HOST": "127.0.0.1",
                        "TOLLGATE_METRICS_PORT": "0", "TOLLGATE_WEBHOOK_URL": receiver.url("/hook").absoluteString,
                        "TOLLGATE_WEBHOOK_SECRETS": longSecret,
                    ])
                #expect(
                    await eventually(timeout: .seconds(15)) {
                        Set(await receiver.received().map(\.eventID)) == Set(written.map(\.eventID))
                    })
                #expect(Set(written.map(\.stream)).count > 1, "the users' events are in several partitions")
                #expect(await notifier.terminate(timeout: .seconds(15)))
            }
        }
    }
}
