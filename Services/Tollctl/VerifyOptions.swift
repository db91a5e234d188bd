import AppStore
import Foundation

/// The verifier settings shared by `verify` and `bench-verify`.
struct VerifyOptions {
    var roots: [String]
    var bundleId: String?
    var environment: String?
    var appAppleId: Int64?

    /// Builds a verifier; with `notes`, says on stderr which checks fall back to the payload's claims.
    func makeVerifier(for jws: String, notes: Bool, chainCacheCapacity: Int = 64) throws -> SignedDataVerifier {
        var rootCertificates: [Data] = []
        for path in roots {
            rootCertificates += try TrustedRootLoader.load(path: path)
        }
        if rootCertificates.isEmpty { rootCertificates = [AppleRootCertificates.appleRootCAG3] }

        let claims = UnverifiedClaims(jws: jws)
        let expectedEnvironment: AppStoreEnvironment?
        switch environment?.lowercased() {
        case "production": expectedEnvironment = .production
        case "sandbox": expectedEnvironment = .sandbox
        case nil:
            expectedEnvironment = claims?.environment
            if notes {
                StandardError.write(
                    "note: no --environment; using the payload's declared environment (\(expectedEnvironment?.rawValue ?? "none")), which is not a check"
                )
            }
        case let other?:
            throw ToolError("invalid_argument", "--environment must be production or sandbox, not \(other)")
        }
        if notes, bundleId == nil {
            StandardError.write("note: no --bundle-id; the bundle ID is not checked")
        }
        if notes, appAppleId == nil, expectedEnvironment == .production {
            StandardError.write("note: no --app-apple-id; the app Apple ID of production data is not checked")
        }
        return try SignedDataVerifier(
            configuration: SignedDataVerifierConfiguration(
                rootCertificates: rootCertificates,
                bundleId: bundleId,
                environment: expectedEnvironment,
                appAppleId: appAppleId,
                allowsMissingAppAppleId: appAppleId == nil,
                chainCacheCapacity: chainCacheCapacity
            ))
    }
}
