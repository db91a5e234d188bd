import Foundation
import Ledger
import TestSupport
import Testing

extension TollgateSystemTests {
    /// `scripts/demo`, the README's quick start, against a real system that takes sandbox purchases (as
    /// `scripts/run`'s does): every step gets its documented answer, the balance moves 0 → 100 → 0 with the
    /// subscription active and renewed, and no signed payload, receipt or token is printed in full.
    @Suite struct DemoScriptTests {
        static var script: URL {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("scripts/demo")
        }

        @Test(.logsOnFailure) func theDemoBuysRenewsAndRefundsPrintingShortExchanges() async throws {
            try await SystemHarness.with(.init(acceptSandbox: true, replicas: 1)) { system in
                let log = system.directory.appendingPathComponent("demo.log")
                let environment = ProcessInfo.processInfo.environment.merging([
                    "TOLLGATE_HTTP_PORT": String(system.ingest.port), "SIM_PORT": String(system.sim.port),
                    "TOLLGATE_ENVIRONMENT": "sandbox", "TOLLGATE_CLIENT_JWT_SECRET": SystemHarness.clientJWTSecret,
                    "TOLLGATE_BUNDLE_ID": SystemHarness.bundleId,
                    "TOLLGATE_TOLLCTL": try ChildProcess.binaryURL("tollctl").path,
                ]) { _, new in new }
                let demo = try SpawnedProcess.spawn(
                    URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", Self.script.path, "--user", "demo-e2e"],
                    environment: environment, output: .file(log))
                let finished = await demo.waitForExit(timeout: .seconds(90))
                if !finished { demo.send(SIGKILL) }
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                #expect(finished && demo.terminationStatus == 0, "\(output)")
                #expect(output.contains("→ POST /v1/receipts?wait=30 (ingest)"), "\(output)")
                #expect(output.contains(#""status": "fulfilled""#), "\(output)")
                let balances = output.split(separator: "\n").filter { $0.contains("balance: ") }
                #expect(balances.first?.contains("balance: 0 coins; entitlements: none") == true, "\(output)")
                #expect(balances.contains { $0.contains("balance: 100 coins") && $0.contains("vip active") }, "\(output)")
                #expect(balances.last?.contains("balance: 0 coins; entitlements: vip active") == true, "\(output)")
                // The demo buyer is no tester: the server kept the sandbox purchases out of the paid top level, and the
                // demo added the sandbox block as a TestFlight build does.
                #expect(balances.dropFirst().allSatisfy { $0.contains("(production and the sandbox block)") }, "\(output)")
                let read = try await system.ingestClient.entitlements(user: "demo-e2e")
                #expect(read.entitlements.isEmpty, "the sandbox subscription counted as paid")
                #expect(output.contains("demo: done"))
                // Signed data is cut: no base64url run as long as a JWS segment, a receipt or the token.
                let long = try Regex("[A-Za-z0-9_=+/-]{100,}")
                #expect(output.firstMatch(of: long) == nil, "\(output)")
                #expect(try await system.ingestClient.entitlements(user: "demo-e2e").coins == 0)
            }
        }
    }
}
