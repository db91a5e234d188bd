import Foundation
import TestSupport
import Testing
import Webhooks

/// Issue 30 item 5: the receivers' snippets in Services/Notifier/README.md work. The Swift one is compiled into this
/// target (`ReadmeSnippet.swift`, which must equal the README's block) and the Python one is run by `python3`; each
/// must accept the notifier's signature with either secret of a rotation and refuse a changed body, a wrong secret,
/// a stale timestamp and (issue 42 item 4) a signature made for another endpoint sharing the secret; the Python
/// receiver takes a replay with a new `Tollgate-Event-Id` as a duplicate.
@Suite(.timeLimit(.minutes(1)))
struct ReadmeSnippetTests {
    static let readme = Vectors.repositoryRoot.appendingPathComponent("Services/Notifier/README.md")

    static func block(_ language: String) throws -> String {
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try #require(text.range(of: "```\(language)\n"))
        let end = try #require(text.range(of: "```", range: start.upperBound..<text.endIndex))
        return String(text[start.upperBound..<end.lowerBound])
    }

    @Test func theSwiftSnippetIsTheCompiledOneAndVerifies() throws {
        let compiled = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ReadmeSnippet.swift"),
            encoding: .utf8)
        let code = compiled.split(separator: "\n", omittingEmptySubsequences: false).drop { $0.hasPrefix("//") }.joined(separator: "\n")
        #expect(code == (try Self.block("swift")), "the README's Swift snippet and ReadmeSnippet.swift differ")

        let body = Array(#"{"id":"evt_1","seq":1}"#.utf8)
        let now = Int64(Date().timeIntervalSince1970)
        let header = WebhookSignature.sign(body: body, secrets: ["whsec_new", "whsec_old"], timestamp: now, endpoint: "crm")
        #expect(verify(header: header, body: Data(body), secrets: ["whsec_old"], endpoint: "crm"))
        #expect(verify(header: header, body: Data(body), secrets: ["whsec_new"], endpoint: "crm"))
        #expect(!verify(header: header, body: Data(body.dropLast()), secrets: ["whsec_new"], endpoint: "crm"))
        #expect(!verify(header: header, body: Data(body), secrets: ["whsec_other"], endpoint: "crm"))
        #expect(!verify(header: header, body: Data(body), secrets: ["whsec_new"], endpoint: "bi"))
        let stale = WebhookSignature.sign(body: body, secrets: ["whsec_new"], timestamp: now - 600, endpoint: "crm")
        #expect(!verify(header: stale, body: Data(body), secrets: ["whsec_new"], endpoint: "crm"))
    }

    @Test func thePythonSnippetVerifiesAndTakesAReplayWithANewHeaderAsADuplicate() async throws {
        let body = #"{"id":"evt_1","seq":1}"#
        let now = Int64(Date().timeIntervalSince1970)
        let header = WebhookSignature.sign(body: Array(body.utf8), secrets: ["whsec_new", "whsec_old"], timestamp: now, endpoint: "crm")
        let stale = WebhookSignature.sign(body: Array(body.utf8), secrets: ["whsec_new"], timestamp: now - 600, endpoint: "crm")
        let script =
            try Self.block("python") + """

                body = \(String(reflecting: body)).encode()
                header = \(String(reflecting: header))
                results = [
                    verify(header, body, ["whsec_old"], "crm"),
                    verify(header, body, ["whsec_new"], "crm"),
                    verify(header, body[:-1], ["whsec_new"], "crm"),
                    verify(header, body, ["whsec_other"], "crm"),
                    verify(\(String(reflecting: stale)), body, ["whsec_new"], "crm"),
                    verify(header, body, ["whsec_new"], "bi"),
                ]
                processed, seen = [], set()
                statuses = [
                    receive({"Tollgate-Signature": header, "Tollgate-Event-Id": "evt_1"}, body, ["whsec_new"], "crm", seen, processed.append),
                    # The same request captured and sent again with a new Tollgate-Event-Id.
                    receive({"Tollgate-Signature": header, "Tollgate-Event-Id": "evt_2"}, body, ["whsec_new"], "crm", seen, processed.append),
                    receive({"Tollgate-Signature": header, "Tollgate-Event-Id": "evt_3"}, body, ["whsec_new"], "bi", seen, processed.append),
                ]
                print("results", results, "statuses", statuses, "processed", processed)
                ok = results == [True, True, False, False, False, False] and statuses == [204, 204, 401]
                raise SystemExit(0 if ok and [e["id"] for e in processed] == ["evt_1"] else 1)
                """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("snippet-\(UUID().uuidString).py")
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("snippet-\(UUID().uuidString).log")
        try Data(script.utf8).write(to: file)
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: log)
        }
        let process = try SpawnedProcess.spawn(
            URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", file.path], environment: ProcessInfo.processInfo.environment,
            output: .file(log))
        #expect(await process.waitForExit())
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "\(output)")
    }
}
