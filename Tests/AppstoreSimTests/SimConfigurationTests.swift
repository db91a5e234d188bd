import AppStore
import AppStoreTesting
@preconcurrency import Crypto
import Foundation
import Testing

@testable import appstore_sim

@Suite("configuration")
struct SimConfigurationTests {
    @Test func defaultsAndEnvironmentValues() throws {
        let defaults = try SimConfiguration(environment: [:])
        #expect(defaults.port == 9700)
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.notifyURL == nil)
        #expect(defaults.retryDelays == [.seconds(3600), .seconds(43_200), .seconds(86_400), .seconds(172_800), .seconds(259_200)])

        let key = P256.Signing.PrivateKey()
        let configured = try SimConfiguration(environment: [
            "SIM_PORT": "9800", "SIM_NOTIFY_URL": "http://127.0.0.1:8080/v1/apple/notifications",
            "SIM_SHARED_SECRET": "s", "SIM_RETRY_SCALE": "3600", "SIM_API_PUBLIC_KEY": key.publicKey.pemRepresentation,
            "SIM_BUNDLE_ID": "com.acme.game", "SIM_PAGE_SIZE": "5",
        ])
        #expect(configured.port == 9800)
        #expect(configured.notifyURL?.path == "/v1/apple/notifications")
        #expect(configured.retryDelays.first == .seconds(1))
        #expect(configured.retryDelays.last == .seconds(72))
        #expect(configured.apiPublicKey?.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(configured.bundleId == "com.acme.game")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sim-key-\(UUID().uuidString).p8")
        try Data(key.pemRepresentation.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try SimConfiguration(environment: ["SIM_API_PUBLIC_KEY": file.path])
        #expect(fromFile.apiPublicKey?.rawRepresentation == key.publicKey.rawRepresentation)
    }

    @Test(arguments: [
        ("SIM_PORT", "70000"), ("SIM_PORT", "x"), ("SIM_NOTIFY_URL", "ftp://x"), ("SIM_RETRY_SCALE", "0.5"),
        ("SIM_API_PUBLIC_KEY", "/no/such/key.pem"), ("SIM_PAGE_SIZE", "0"), ("SIM_APP_APPLE_ID", "-1"),
        ("LOG_LEVEL", "loud"), ("SIM_NOTIFY_TIMEOUT_MS", "0"),
    ])
    func malformedValuesNameTheVariable(name: String, value: String) {
        #expect {
            _ = try SimConfiguration(environment: [name: value])
        } throws: { error in
            "\(error)".contains(name)
        }
    }

    @Test func authoritySavedToADirectoryIsLoadedAgain() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try TestCertificateAuthority.loadOrCreate(directory: directory)
        let again = try TestCertificateAuthority.loadOrCreate(directory: directory)
        #expect(first.rootDER == again.rootDER)
        #expect(first.leafDER == again.leafDER)
    }
}
