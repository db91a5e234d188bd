import AppStore
import AppStoreTesting
import Crypto
import Foundation

/// `abuse-forge`: the crafted inputs of the abuse run (`scripts/abuse`), made with the same code the tests use, and
/// the door's cost per refused request measured in-process (issue 29).
///
///     abuse-forge door-bench --vector JWS --root DER [--seconds S]    µs per check of each attack, beside a forged
///                                                                    signature on a cached chain, and their ratios
///     abuse-forge receipt-bomb --keys K --count N --out FILE          N app receipts (base64, one a line) whose
///                                                                    certificates cross-sign each other (K keys)
///     abuse-forge notifications --ca-dir DIR --bundle ID --kind broken-leaf|impostor --count N --out FILE
///                                                                    N V2 notification bodies around the CA's chain
///     abuse-forge p256-key --out FILE                                 a new P-256 private key (PKCS#8 PEM), for the
///                                                                    run's App Store Server API and offer keys
@main
struct App {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        func option(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        func required(_ name: String) throws -> String {
            guard let value = option(name) else { throw ForgeError("\(name) is required") }
            return value
        }
        do {
            switch arguments.first {
            case "door-bench":
                try await DoorBench.run(
                    vector: try required("--vector"), root: try required("--root"), seconds: Double(option("--seconds") ?? "2") ?? 2)
            case "receipt-bomb":
                try Forgeries.receiptBombs(
                    keys: Int(option("--keys") ?? "8") ?? 8, count: Int(option("--count") ?? "1") ?? 1, out: try required("--out"))
            case "notifications":
                try Forgeries.notifications(
                    caDirectory: try required("--ca-dir"), bundleId: try required("--bundle"), kind: try required("--kind"),
                    count: Int(option("--count") ?? "1") ?? 1, out: try required("--out"))
            case "p256-key":
                try Forgeries.write([P256.Signing.PrivateKey().pemRepresentation], to: try required("--out"))
            default:
                throw ForgeError("usage: abuse-forge door-bench | receipt-bomb | notifications | p256-key (see App.swift)")
            }
        } catch {
            FileHandle.standardError.write(Data("abuse-forge: \(error)\n".utf8))
            exit(1)
        }
    }
}

struct ForgeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
