import Redis
import Testing

/// A ``ClusterReader``'s decisions, without a server: the requests it sends retry ``ClusterRequest/Retries/byCaller``,
/// and ``ClusterRouter`` decides for them as for the client's own (`ClusterRouterTests`), except that what the client
/// would retry within its window goes back to the consumer's read loop, and an `UNBLOCKED` read is sent again once.
@Suite("Redis Cluster: a dedicated reader's decisions")
struct ClusterReaderDecisionTests {
    typealias Endpoint = RedisConfiguration.Endpoint

    static let stream = ClusterRouterTests.key(onA: true)
    static let slot = ClusterKeySlot.slot(stream)

    static func request() -> ClusterRequest {
        let read = RedisCommand("XREADGROUP", arguments: ["GROUP", "g", "c", "BLOCK", 100, "STREAMS", stream, ">"], keysAt: [6])
        return ClusterRequest(read.blocking(), route: .slot(slot), retries: .byCaller, deadline: .now)
    }

    @Test func movedRetargetsTheReaderAndPatchesTheMap() throws {
        var router = try ClusterRouterTests.router()
        var request = Self.request()
        let decision = router.failed(
            ClusterRouterTests.error("MOVED \(Self.slot) 10.0.0.3:7002"), on: ClusterRouterTests.a, request: &request)
        #expect(decision == .init(refresh: .inBackground(force: false), next: .send))
        #expect(request.next == .node(ClusterRouterTests.c))
        #expect(router.map.primaries[Self.slot] == ClusterRouterTests.c && router.counters.moved == 1)
    }

    @Test func askGoesToTheImportingNodeOnceAndKeepsTheTarget() throws {
        var router = try ClusterRouterTests.router()
        var request = Self.request()
        let decision = router.failed(
            ClusterRouterTests.error("ASK \(Self.slot) 10.0.0.3:7002"), on: ClusterRouterTests.a, request: &request)
        #expect(decision == .init(refresh: .none, next: .send))
        #expect(request.next == .asking(ClusterRouterTests.c))
        #expect(router.map.primaries[Self.slot] == ClusterRouterTests.a && router.counters.ask == 1)
    }

    @Test func redirectionsInARowAreBounded() throws {
        var router = try ClusterRouterTests.router(maxRedirections: 1)
        var request = Self.request()
        let moved = ClusterRouterTests.error("MOVED \(Self.slot) 10.0.0.3:7002")
        #expect(router.failed(moved, on: ClusterRouterTests.a, request: &request).next == .send)
        #expect(router.failed(moved, on: ClusterRouterTests.c, request: &request) == .init(next: .fail))
    }

    @Test func anUnblockedReadIsSentAgainOnceByARefreshedMap() throws {
        var router = try ClusterRouterTests.router()
        var request = Self.request()
        let unblocked = ClusterRouterTests.error("UNBLOCKED the stream key no longer exists")
        let decision = router.failed(unblocked, on: ClusterRouterTests.a, request: &request)
        #expect(decision == .init(refresh: .beforeNext, next: .send, dropConnection: true))
        #expect(request.next == .route)
        #expect(router.failed(unblocked, on: ClusterRouterTests.a, request: &request) == .init(next: .fail))
        // The client's own requests do not send an unblocked read again (a CLIENT UNBLOCK may have meant it).
        var shared = ClusterRequest(route: .slot(Self.slot), deadline: .now + .seconds(10))
        #expect(router.failed(unblocked, on: ClusterRouterTests.a, request: &shared) == .init(next: .fail))
    }

    @Test func refusalsGoBackToTheReadLoop() throws {
        var router = try ClusterRouterTests.router()
        var request = Self.request()
        let tryAgain = router.failed(ClusterRouterTests.error("TRYAGAIN rehashing"), on: ClusterRouterTests.a, request: &request)
        #expect(tryAgain == .init(refresh: .inBackground(force: false), next: .fail))
        let down = router.failed(ClusterRouterTests.error("CLUSTERDOWN The cluster is down"), on: ClusterRouterTests.a, request: &request)
        #expect(down == .init(refresh: .inBackground(force: true), next: .fail, dropConnection: true))
        #expect(router.counters.tryAgain == 1 && router.counters.clusterDown == 1)
        #expect(
            router.failed(ClusterRouterTests.error("NOGROUP no such group"), on: ClusterRouterTests.a, request: &request)
                == .init(next: .fail))
    }

    @Test func aLostNodeDropsTheConnectionAndRefreshesAtOnce() throws {
        var router = try ClusterRouterTests.router()
        for error in [RedisError.connectionFailed("refused"), .unknownOutcome("timed out")] {
            var request = Self.request()
            #expect(
                router.failed(error, on: ClusterRouterTests.a, request: &request)
                    == .init(refresh: .inBackground(force: true), next: .fail, dropConnection: true))
        }
        // Not sent again, so not counted as a command that found its node unreachable and was sent again.
        #expect(router.counters.unreachable == 0)
        #expect(router.unreachable.isEmpty)
    }
}
