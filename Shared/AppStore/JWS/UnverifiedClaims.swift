import Foundation

/// What a JWS payload says about itself, read WITHOUT verifying anything. Only for choosing defaults in
/// operator tools (`tollctl verify` without `--environment`); never a basis for trust.
package struct UnverifiedClaims: Sendable, Hashable {
    package var environment: AppStoreEnvironment?
    package var bundleId: String?
    package var appAppleId: Int64?

    /// Reads the claims of `jws`; `nil` when it is not a readable JWS.
    package init?(jws: String) {
        guard let compact = CompactJWS(jws), let payload = compact.decode(compact.payload),
            let probe = try? JSONDecoder().decode(Probe.self, from: Data(payload))
        else { return nil }
        environment = probe.environment ?? probe.receiptType ?? probe.data?.environment ?? probe.summary?.environment
        bundleId = probe.bundleId ?? probe.data?.bundleId ?? probe.summary?.bundleId
        appAppleId = probe.appAppleId ?? probe.data?.appAppleId ?? probe.summary?.appAppleId
    }

    private struct Probe: Decodable {
        struct Inner: Decodable {
            var environment: AppStoreEnvironment?
            var bundleId: String?
            var appAppleId: Int64?
        }
        var environment: AppStoreEnvironment?
        var receiptType: AppStoreEnvironment?
        var bundleId: String?
        var appAppleId: Int64?
        var data: Inner?
        var summary: Inner?
    }
}
