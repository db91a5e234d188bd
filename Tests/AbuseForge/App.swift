import AppStore
import AppStoreTesting
import ArgumentParser
import Core
import Crypto
import Foundation

/// `abuse-forge`: the crafted inputs of the abuse run (`scripts/abuse`), made with the same code the tests use, and
/// the door's cost per refused request measured in-process (issue 29).
@main
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "abuse-forge", abstract: "The abuse run's crafted inputs, and the notification door's cost per refusal.",
        version: TollgateVersion.line(tool: "abuse-forge"),
        subcommands: [DoorBenchCommand.self, ReceiptBombCommand.self, NotificationsCommand.self, KeyCommand.self])
}

/// `abuse-forge door-bench`: µs per check of each attack on the door, beside a forged signature on a cached chain.
struct DoorBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "door-bench", abstract: "The door's cost per refused JWS.")

    @Option(help: "A genuine JWS whose x5c the attacks are built around.") var vector: String
    @Option(help: "The root (DER or PEM) that JWS chains to.") var root: String
    @Option(help: "Checks of each cheap kind (new chains are checked once each, 400 of them).") var count = 20_000

    func run() async throws {
        try await DoorBench.run(vector: vector, root: root, count: count)
    }
}

/// `abuse-forge receipt-bomb`: app receipts whose certificates cross-sign each other, base64, one a line.
struct ReceiptBombCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "receipt-bomb", abstract: "Receipt certificate bombs.")

    @Option(help: "Keys that cross-sign each other (k keys: k × (k − 1) certificates).") var keys = 8
    @Option(help: "How many receipts.") var count = 1
    @Option(help: "Where to write them.") var out: String

    func run() throws {
        try Forgeries.receiptBombs(keys: keys, count: count, out: out)
    }
}

/// `abuse-forge notifications`: V2 notification bodies around a test authority's chain, one a line.
struct NotificationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications", abstract: "Notifications with fresh broken certificate chains.")

    @Option(name: .customLong("ca-dir"), help: "The authority's directory (appstore-sim --ca-dir).") var caDirectory: String
    @Option(help: "The bundle ID the payloads name.") var bundle: String
    @Option(help: "broken-leaf (a leaf its intermediate never signed) or impostor (an intermediate named like it).")
    var kind: String
    @Option(help: "How many, each with certificates of its own.") var count = 1
    @Option(help: "Where to write them.") var out: String

    func run() throws {
        try Forgeries.notifications(caDirectory: caDirectory, bundleId: bundle, kind: kind, count: count, out: out)
    }
}

/// `abuse-forge p256-key`: a new P-256 private key (PKCS#8 PEM), for the run's App Store Server API and offer keys.
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "p256-key", abstract: "A new P-256 private key (PEM).")

    @Option(help: "Where to write it.") var out: String

    func run() throws {
        try Forgeries.write([P256.Signing.PrivateKey().pemRepresentation], to: out)
    }
}

struct ForgeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
