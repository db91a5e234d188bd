import Redis
import Testing

/// The cluster client's decisions, without a server: ``ClusterRouter`` (where a command goes, what an answer
/// means), ``ClusterRequest`` (one command's redirections and backoff) and ``ClusterPipeline`` (a pipeline's split,
/// its `MULTI … EXEC` blocks and the nodes its trailing `WAIT` goes to).
@Suite("Redis Cluster: routing state machine")
struct ClusterRouterTests {
    typealias Endpoint = RedisConfiguration.Endpoint

    static let a = Endpoint(host: "10.0.0.1", port: 7000)
    static let b = Endpoint(host: "10.0.0.2", port: 7001)
    static let c = Endpoint(host: "10.0.0.3", port: 7002)
    static let replica = Endpoint(host: "10.0.0.4", port: 7003)

    /// Slots 0–8191 on `a` (with `replica`), 8192–16383 on `b`, as `CLUSTER SLOTS` lists them.
    static func router(maxRedirections: Int = 5) throws -> ClusterRouter {
        func node(_ endpoint: Endpoint) -> RedisReply {
            .array([.bulk(Array(endpoint.host.utf8)), .integer(Int64(endpoint.port)), .bulk(Array("id".utf8))])
        }
        let reply = RedisReply.array([
            .array([.integer(0), .integer(8191), node(a), node(replica)]),
            .array([.integer(8192), .integer(16383), node(b)]),
        ])
        return ClusterRouter(maxRedirections: maxRedirections, map: try ClusterSlotMap(clusterSlots: reply, fallbackHost: "x"))
    }

    /// A key whose slot is served by `a` (below 8192) or `b`.
    static func key(onA: Bool, _ index: Int = 0) -> String {
        var candidate = 0
        var found = -1
        while true {
            let key = "k\(candidate)"
            if (ClusterKeySlot.slot(key) < 8192) == onA {
                found += 1
                if found == index { return key }
            }
            candidate += 1
        }
    }

    static func error(_ text: String) -> RedisError {
        .server(code: String(text.split(separator: " ").first ?? "ERR"), message: text)
    }

    static func request(_ command: RedisCommand, deadline: Duration = .seconds(10)) throws -> ClusterRequest {
        ClusterRequest(command, route: try ClusterRoute.of(command), deadline: .now + deadline)
    }

    @Test func movedPatchesTheSlotAndResendsToTheNamedNode() throws {
        var router = try Self.router()
        let key = Self.key(onA: true)
        let slot = ClusterKeySlot.slot(key)
        var request = try Self.request(RedisCommand("GET", key))
        #expect(router.destination(of: &request)?.node == Self.a)

        let decision = router.failed(Self.error("MOVED \(slot) 10.0.0.3:7002"), on: Self.a, request: &request)
        #expect(decision == .init(refresh: .inBackground(force: false), next: .send))
        #expect(request.landedOn == Self.a)
        #expect(router.counters.moved == 1)
        #expect(router.map.primaries[slot] == Self.c)
        let next = router.destination(of: &request)
        #expect(next?.node == Self.c && next?.asking == false)
        // The map is patched: the next command for the slot goes to the new owner at once; the other slots stay.
        var later = try Self.request(RedisCommand("SET", key, "v"))
        #expect(router.destination(of: &later)?.node == Self.c)
        #expect(router.primary(for: .slot(slot == 0 ? 1 : slot - 1)) == Self.a)

        router.answered(by: Self.c, request: &request)
        #expect(request.landedOn == Self.c)
    }

    @Test func redirectionsInARowAreBounded() throws {
        var router = try Self.router(maxRedirections: 2)
        var request = try Self.request(RedisCommand("GET", Self.key(onA: false)))
        let moved = Self.error("MOVED \(ClusterKeySlot.slot(Self.key(onA: false))) 10.0.0.1:7000")
        #expect(router.failed(moved, on: Self.b, request: &request).next == .send)
        #expect(router.failed(moved, on: Self.a, request: &request).next == .send)
        #expect(router.failed(moved, on: Self.a, request: &request) == .init(next: .fail))
    }

    @Test func askSendsAskingOnceAndLeavesTheMap() throws {
        var router = try Self.router()
        let key = Self.key(onA: true)
        let slot = ClusterKeySlot.slot(key)
        var request = try Self.request(RedisCommand("XADD", key, "*", "f", "v"))
        _ = router.destination(of: &request)
        let decision = router.failed(Self.error("ASK \(slot) :7002"), on: Self.a, request: &request)
        #expect(decision == .init(refresh: .none, next: .send))
        #expect(router.counters.ask == 1 && router.counters.moved == 0)
        // An empty host in the redirection is the host that answered.
        let asked = router.destination(of: &request)
        #expect(asked?.node == Endpoint(host: "10.0.0.1", port: 7002) && asked?.asking == true)
        #expect(router.map.primaries[slot] == Self.a)
        // Only that one try carries ASKING: the next goes by the (unchanged) map.
        let after = router.destination(of: &request)
        #expect(after?.node == Self.a && after?.asking == false)
    }

    @Test func tryAgainBacksOffWithinTheRetryWindow() throws {
        var router = try Self.router()
        var request = try Self.request(RedisCommand("MGET", "{t}a", "{t}b"), deadline: .seconds(1))
        _ = router.failed(Self.error("MOVED 1 10.0.0.3:7002"), on: Self.a, request: &request)
        #expect(request.redirections == 1)
        let decision = router.failed(Self.error("TRYAGAIN Multiple keys request during rehashing of slot"), on: Self.c, request: &request)
        #expect(decision == .init(refresh: .none, next: .backOff))
        #expect(router.counters.tryAgain == 1)
        #expect(request.redirections == 0)
        var generator = SplitMix(seed: 7)
        var ceiling = Duration.milliseconds(10)
        for _ in 0..<8 {
            let delay = try #require(request.backOff(now: .now, using: &generator))
            #expect(delay >= ceiling / 2 && delay <= ceiling)
            ceiling = min(ceiling * 2, .milliseconds(200))
        }
        // A pause that would end past the deadline is not taken: the error is thrown.
        #expect(request.backOff(now: request.deadline - .milliseconds(1), using: &generator) == nil)
    }

    @Test func clusterDownRefreshesThenBacksOff() throws {
        var router = try Self.router()
        var request = try Self.request(RedisCommand("GET", "x"))
        let decision = router.failed(Self.error("CLUSTERDOWN The cluster is down"), on: Self.b, request: &request)
        #expect(decision == .init(refresh: .beforeNext, next: .backOff))
        #expect(router.counters.clusterDown == 1 && router.counters.tryAgain == 0)
        #expect(request.landedOn == Self.b)
        #expect(request.backOff(now: .now) != nil)
        #expect(request.next == .route)
    }

    @Test func anUnreachableNodeIsAskedLastForTheMapAndNeverLandedOn() throws {
        var router = try Self.router()
        var request = try Self.request(RedisCommand("GET", Self.key(onA: true)))
        let destination = router.destination(of: &request)
        let node = try #require(destination?.node)
        let decision = router.failed(.connectionFailed("refused"), on: node, request: &request)
        #expect(decision == .init(refresh: .beforeNext, next: .backOff))
        #expect(router.counters.unreachable == 1)
        #expect(request.landedOn == nil)
        #expect(router.unreachable == [Self.a])
        let seed = Endpoint(host: "seed", port: 1)
        #expect(router.refreshCandidates(seeds: [seed, Self.b]) == [Self.b, Self.replica, seed, Self.a])
        // The map read from the promoted replica names it; the node is no longer avoided.
        var promoted = router.map
        promoted.move(slot: 0, to: Self.replica)
        router.install(promoted, from: Self.a)
        #expect(router.unreachable.isEmpty && router.counters.refreshes == 1)
    }

    @Test func anUnknownOutcomeIsNeverSentAgain() throws {
        var router = try Self.router()
        var request = try Self.request(RedisCommand("INCR", "n"))
        let decision = router.failed(.unknownOutcome("timed out"), on: Self.b, request: &request)
        #expect(decision == .init(refresh: .inBackground(force: true), next: .fail))
        #expect(request.landedOn == Self.b)
        #expect(router.failed(Self.error("WRONGTYPE x"), on: Self.b, request: &request) == .init(next: .fail))
    }

    @Test func aMissingFunctionReloadsTheLibrariesOnce() throws {
        var router = try Self.router()
        var call = try Self.request(RedisCommand("FCALL", "tg_apply", 1, "{p3}k"))
        let missing = Self.error("ERR Function not found")
        #expect(router.failed(missing, on: Self.a, request: &call) == .init(next: .reloadLibraries))
        call.librariesReloaded(on: Self.a)
        #expect(router.destination(of: &call)?.node == Self.a)
        #expect(router.failed(missing, on: Self.a, request: &call) == .init(next: .fail))
        var plain = try Self.request(RedisCommand("GET", "k"))
        #expect(router.failed(missing, on: Self.a, request: &plain) == .init(next: .fail))
    }

    @Test func noMapMeansReadOneFirst() {
        var router = ClusterRouter()
        var request = ClusterRequest(route: .slot(5), deadline: .now + .seconds(1))
        #expect(router.destination(of: &request) == nil)
        #expect(router.split([ClusterPipeline.Unit(indices: 0..<1, route: .anyPrimary, isTransaction: false)]) == nil)
        #expect(router.refreshCandidates(seeds: [Self.a]) == [Self.a])
    }

    @Test func aPipelineIsSplitByNodeInOrder() throws {
        var router = try Self.router()
        let onA = (0..<3).map { Self.key(onA: true, $0) }
        let onB = (0..<2).map { Self.key(onA: false, $0) }
        let pipeline = try ClusterPipeline([
            RedisCommand("SET", onA[0], "1"),  // 0 → a
            RedisCommand("SET", onB[0], "1"),  // 1 → b
            RedisCommand("MULTI"),  // 2–5: one block → b
            RedisCommand("INCR", onB[1]),
            RedisCommand("INCR", onB[1]),
            RedisCommand("EXEC"),
            RedisCommand("GET", onA[1]),  // 6 → a
            RedisCommand("DEL", onA[2]),  // 7 → a
        ])
        #expect(pipeline.units.map(\.indices) == [0..<1, 1..<2, 2..<6, 6..<7, 7..<8])
        #expect(pipeline.units.map(\.isTransaction) == [false, false, true, false, false])
        let split = router.split(pipeline.units)
        let parts = try #require(split)
        #expect(parts.map(\.node) == [Self.a, Self.b])
        #expect(parts[0].units.map(\.indices) == [0..<1, 6..<7, 7..<8])
        #expect(parts[1].units.map(\.indices) == [1..<2, 2..<6])
        #expect(pipeline.commands(of: parts[1].units).map(\.name) == ["SET", "MULTI", "INCR", "INCR", "EXEC"])

        #expect(throws: RedisError.self) {
            try ClusterPipeline([
                RedisCommand("MULTI"), RedisCommand("SET", onA[0], "1"), RedisCommand("SET", onB[0], "1"), RedisCommand("EXEC"),
            ])
        }
        #expect(throws: RedisError.self) { try ClusterPipeline([RedisCommand("GET", "x"), RedisCommand("FUNCTION", "LOAD", "src")]) }
    }

    @Test func waitGoesToEveryNodeThatAnsweredAndNoneNothingReached() throws {
        let commands = [
            RedisCommand("SET", Self.key(onA: true), "1"), RedisCommand("SET", Self.key(onA: false), "1"),
            RedisCommand("SET", Self.key(onA: true, 1), "1"), RedisCommand("WAIT", arguments: [1, 100], keysAt: []).blocking(),
        ]
        let wait = try #require(ClusterPipeline.trailingWait(commands))
        #expect(wait.name == "WAIT")
        #expect(ClusterPipeline.trailingWait([RedisCommand("WAIT", arguments: [1, 100], keysAt: []).blocking()]) == nil)
        #expect(ClusterPipeline.trailingWait(Array(commands.dropLast())) == nil)

        var router = try Self.router()
        var pipeline = try ClusterPipeline(Array(commands.dropLast()))
        let split = router.split(pipeline.units)
        let parts = try #require(split)
        // a answers, but one of its commands was MOVED to c; b could not be reached, and its command landed on c too.
        try pipeline.record([.status("OK"), .error("MOVED 1 10.0.0.3:7002")], for: parts[0].units, from: Self.a)
        #expect(router.pipelinedError("MOVED 1 10.0.0.3:7002", of: commands[2], from: Self.a) == .resend(.node(Self.c)))
        pipeline.record(.status("OK"), at: 2)
        pipeline.landed(on: Self.c)
        router.partUnreachable(Self.b)
        pipeline.record(.status("OK"), at: 1)
        pipeline.landed(on: Self.c)
        #expect(pipeline.waitTargets == [Self.a, Self.c])
        #expect(pipeline.orderedReplies == [.status("OK"), .status("OK"), .status("OK")])
        #expect(router.counters.unreachable == 1 && router.unreachable == [Self.b])
        // A part whose reply count is wrong is refused, not indexed past its end.
        #expect(throws: RedisError.self) { try pipeline.record([.status("OK")], for: parts[0].units, from: Self.a) }
    }

    @Test func pipelinedErrorsAreResentKeptOrReloaded() throws {
        var router = try Self.router()
        let get = RedisCommand("GET", "k")
        #expect(router.pipelinedError("ASK 9 10.0.0.3:7002", of: get, from: Self.a) == .resend(.asking(Self.c)))
        #expect(router.pipelinedError("TRYAGAIN later", of: get, from: Self.a) == .resendAfter(.milliseconds(10)))
        #expect(router.pipelinedError("CLUSTERDOWN down", of: get, from: Self.a) == .resendAfter(.milliseconds(10)))
        #expect(router.pipelinedError("WRONGTYPE Operation", of: get, from: Self.a) == .keep)
        #expect(router.pipelinedError("ERR Function not found", of: get, from: Self.a) == .keep)
        #expect(router.pipelinedError("ERR Function not found", of: RedisCommand("FCALL", "f", 0), from: Self.a) == .reloadLibraries)
        #expect(router.counters.ask == 1 && router.counters.tryAgain == 1 && router.counters.clusterDown == 1)
    }

    @Test func aTransactionRefusedWholeIsSentAgainWhole() throws {
        let key = Self.key(onA: true)
        let block = [RedisCommand("MULTI"), RedisCommand("INCR", key), RedisCommand("EXEC")]
        func refusal(_ replies: [RedisReply]) throws -> ClusterPipeline.TransactionRefusal? {
            var pipeline = try ClusterPipeline(block)
            try pipeline.record(replies, for: pipeline.units, from: Self.a)
            return pipeline.transactionRefusal(of: pipeline.units[0])
        }
        let slot = ClusterKeySlot.slot(key)
        let moved = try refusal([.status("OK"), .error("MOVED \(slot) 10.0.0.2:7001"), .error("EXECABORT Transaction discarded")])
        guard case .moved(let redirect) = moved else {
            Issue.record("EXECABORT after MOVED: \(String(describing: moved))")
            return
        }
        #expect(redirect.endpoint == Self.b && redirect.slot == slot)
        #expect(try refusal([.status("OK"), .status("QUEUED"), .error("CLUSTERDOWN The cluster is down")]) == .refused("CLUSTERDOWN"))
        #expect(try refusal([.status("OK"), .error("TRYAGAIN x"), .error("EXECABORT Transaction discarded")]) == .refused("TRYAGAIN"))
        // ASK inside a block is left as it is; a block that ran, or failed otherwise, is not sent again.
        #expect(try refusal([.status("OK"), .error("ASK \(slot) 10.0.0.2:7001"), .error("EXECABORT Transaction discarded")]) == nil)
        #expect(try refusal([.status("OK"), .status("QUEUED"), .array([.integer(1)])]) == nil)
        #expect(try refusal([.status("OK"), .error("WRONGTYPE x"), .error("EXECABORT Transaction discarded")]) == nil)
    }
}

/// A seeded generator, so backoff delays are reproducible.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
