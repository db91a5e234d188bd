import Core
import Foundation
import TestSupport
import Testing

/// `tollctl verify` end to end: the built binary on real Apple vectors, and on a test-signed one with `--root`.
@Suite struct VerifyCommandTests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], stdin: Data? = nil) async throws -> Run {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tollctl-verify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("stdin")
        let out = directory.appendingPathComponent("stdout")
        let err = directory.appendingPathComponent("stderr")
        try (stdin ?? Data()).write(to: input)
        let process = try SpawnedProcess.spawn(
            try ChildProcess.binaryURL("tollctl"), arguments: arguments,
            environment: ProcessInfo.processInfo.environment, input: input, output: .file(out), error: .file(err))
        guard await process.waitForExit() else {
            process.send(SIGKILL)
            throw ChildProcess.Failure(description: "tollctl \(arguments.joined(separator: " ")) did not finish within 120 s")
        }
        return Run(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self)
        )
    }

    static var root: String { Vectors.appleReal.appendingPathComponent("apple-root-ca-g3.der").path }
    static func vector(_ name: String) -> String { Vectors.appleReal.appendingPathComponent(name).path }

    @Test
    func acceptedNotificationPrintsDecodedJSONWithNestedDataInPlace() async throws {
        let run = try await Self.run([
            "verify", "--root", Vectors.testSigned.appendingPathComponent("test-root-ca.der").path,
            "--bundle-id", "com.example.tollgate", "--environment", "sandbox", "--app-apple-id", "1234567890",
            Vectors.testSigned.appendingPathComponent("notification-did_renew-sandbox-1.jws").path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(JSONValue.read(run.stdout.utf8))
        #expect(object["notificationType"]?.string == "DID_RENEW")
        #expect(object["notificationUUID"]?.string == "6f1c1d2e-0001-4000-8000-000000000001")
        let data = try #require(object["data"])
        #expect(data["signedTransactionInfo"]?["transactionId"]?.string == "3000000000000101")
        #expect(data["signedRenewalInfo"]?["autoRenewProductId"]?.string == "com.example.vip.month")
    }

    @Test
    func acceptedTransactionFromStandardInputWithTheBuiltInRoot() async throws {
        let jws = try Data(contentsOf: URL(fileURLWithPath: Self.vector("transaction-consumable-sandbox-1.jws")))
        let run = try await Self.run(["verify", "--bundle-id", "com.goodheartapp", "--environment", "sandbox", "-"], stdin: jws)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\"transactionId\" : \"2000000847061981\""))
        #expect(run.stdout.contains("\"productId\" : \"gh_super_good_ticket_1\""))
    }

    @Test(arguments: [
        ("rejected-transaction-forged-leaf-selfsigned.jws", "invalid_chain"),
        ("rejected-transaction-payload-modified.jws", "invalid_signature"),
        ("rejected-real-notification-did_renew-no_signeddate-sandbox-1.jws", "certificate_expired"),
    ])
    func rejectedVectorExitsOneWithTheCode(file: String, code: String) async throws {
        let run = try await Self.run(["verify", "--root", Self.root, "--environment", "sandbox", Self.vector(file)])
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        let errorLine = run.stderr.split(separator: "\n").first { $0.hasPrefix("tollctl: error: ") }
        #expect(errorLine?.hasPrefix("tollctl: error: \(code):") == true, "\(run.stderr)")
    }

    @Test
    func wrongBundleIdIsRejected() async throws {
        let run = try await Self.run([
            "verify", "--root", Self.root, "--bundle-id", "com.example.other", "--environment", "sandbox",
            Self.vector("transaction-consumable-sandbox-1.jws"),
        ])
        #expect(run.status == 1)
        #expect(run.stderr.contains("tollctl: error: wrong_bundle_id:"))
    }
}
