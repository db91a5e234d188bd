import AppStore
import ArgumentParser
import Core
import Foundation

/// `tollctl verify`: verifies one App Store JWS and prints its decoded JSON.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify an App Store JWS (notification, transaction, renewal info or app transaction).",
        discussion: """
            Checks ES256, the x5c chain to a trusted root (Apple Root CA - G3 unless --root is given) with \
            Apple's OIDs, the signature, certificate validity at the payload's signedDate, and the app. \
            Prints the decoded JSON (nested JWS decoded in place) and exits 0, or prints \
            'error: <code>: <message>' on stderr and exits 1.
            Without --environment the payload's own declared environment is used (that is not a check); \
            without --bundle-id the bundle ID is not checked; without --app-apple-id production data's app \
            Apple ID is not checked. A note on stderr says when a check was skipped.
            """
    )

    @Option(name: .customLong("root"), help: "Trusted root certificate (DER or PEM); repeatable.")
    var roots: [String] = []

    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID.")
    var bundleId: String?

    @Option(name: .customLong("environment"), help: "production or sandbox.")
    var environment: String?

    @Option(name: .customLong("app-apple-id"), help: "The app's Apple ID (checked on production data).")
    var appAppleId: Int64?

    @Argument(help: "File holding the JWS, or - for standard input.")
    var file: String

    func run() async throws {
        let jws: String
        do {
            jws = try JWSInput.read(file)
        } catch {
            throw VerifyCommand.fail(.invalidFormat, (error as? ToolError)?.message ?? "\(error)")
        }
        let verifier: SignedDataVerifier
        do {
            verifier = try VerifyOptions(
                roots: roots, bundleId: bundleId, environment: environment, appAppleId: appAppleId
            ).makeVerifier(for: jws, notes: true)
        } catch {
            StandardError.write(Fatal.line(tool: "tollctl", error: error))
            throw ExitCode(2)
        }
        switch await verifier.verifyAny(jws) {
        case .verified(let data):
            let json = try data.decodedJSON()
            FileHandle.standardOutput.write(json)
            FileHandle.standardOutput.write(Data("\n".utf8))
        case .rejected(let failure), .retryable(let failure):
            throw VerifyCommand.fail(failure.code, failure.message)
        }
    }

    static func fail(_ code: FailureCode, _ message: String) -> ExitCode {
        StandardError.write(Fatal.line(tool: "tollctl", error: VerificationFailure(code, message)))
        return ExitCode(1)
    }
}

/// Writes lines to standard error.
enum StandardError {
    static func write(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// Reads a JWS from a file or standard input.
enum JWSInput {
    static func read(_ file: String) throws -> String {
        let data: Data?
        if file == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            data = FileManager.default.contents(atPath: file)
        }
        guard let data, let text = String(data: data, encoding: .utf8) else {
            throw ToolError("unreadable_input", "cannot read \(file)")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
