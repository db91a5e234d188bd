import Ledger
import Pipeline
import Redis
import TestSupport
import Testing
import Verification
import Webhooks

@testable import ingest

/// Every Redis Function library Tollgate loads, against a real redis-server: each loads, registers exactly the
/// functions its Swift side calls (under its own prefix, so versions can live side by side), and uses only the
/// shared Lua it includes.
@Suite struct FunctionLibraryTests {
    static let libraries: [RedisFunctionLibrary] = [
        PipelineFunctions.library, RateLimitFunctions.library, DeadLetterFunctions.library, LedgerFunctions.library,
        IngestFunctions.library, OfferFunctions.library, VerifierFunctions.library, ReconcileFunctions.library,
        NotifierFunctions.library,
    ]

    @Test func everyLibraryLoadsAndRegistersWhatSwiftCalls() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            for library in Self.libraries { try await library.load(on: redis) }
            let listed = try await redis.send("FUNCTION", "LIST")
            var registered: [String: Set<String>] = [:]
            for entry in listed.array ?? [] {
                let fields = entry.array ?? []
                var name = ""
                var functions: Set<String> = []
                for index in stride(from: 0, to: fields.count - 1, by: 2) {
                    switch fields[index].string {
                    case "library_name": name = fields[index + 1].string ?? ""
                    case "functions":
                        for function in fields[index + 1].array ?? [] {
                            let pairs = function.array ?? []
                            for at in stride(from: 0, to: pairs.count - 1, by: 2) where pairs[at].string == "name" {
                                functions.insert(pairs[at + 1].string ?? "")
                            }
                        }
                    default: break
                    }
                }
                registered[name] = functions
            }
            #expect(Set(registered.keys) == Set(Self.libraries.map(\.name)))
            for library in Self.libraries {
                #expect(registered[library.name] == Set(library.functions.map(library.function)), "\(library.name)")
                #expect(library.functions.allSatisfy { library.function($0).hasPrefix(library.prefix) })
            }
            let all = Self.libraries.flatMap { $0.functions.map($0.function) }
            #expect(Set(all).count == all.count, "function names are global: no two libraries may share one")
        }
    }

    /// A library that calls a shared helper must include the Lua that defines it (Lua would only fail when the
    /// call runs).
    @Test func everyLibraryDefinesTheSharedHelpersItCalls() {
        let helpers = [
            "fail", "register", "count_at", "pairs_at", "n2s", "hash_table", "is_final", "append_with_status", "check_status",
            "write_status", "acknowledge",
        ]
        for library in Self.libraries {
            for helper in helpers where library.source.contains("\(helper)(") {
                #expect(library.source.contains("local function \(helper)("), "\(library.name) calls \(helper) without defining it")
            }
            #expect(library.source.hasPrefix("#!lua name=\(library.name)\n"))
        }
    }
}
