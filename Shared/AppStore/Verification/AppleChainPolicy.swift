package import SwiftASN1
package import X509

/// Apple's own rule on top of RFC 5280: the leaf carries the receipt-signing OID
/// (1.2.840.113635.100.6.11.1) and the intermediate the Apple WWDR OID (1.2.840.113635.100.6.2.1).
/// Chains are exactly leaf → intermediate → root.
package struct AppleChainPolicy: VerifierPolicy, Sendable {
    /// Marks a certificate as Apple's App Store receipt-signing leaf.
    package static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Marks a certificate as Apple's Worldwide Developer Relations intermediate.
    package static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    package let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.leafOID, Self.intermediateOID]

    package init() {}

    package func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "chain must be leaf, intermediate and root; got \(chain.count) certificates")
        }
        guard chain[0].extensions[oid: Self.leafOID] != nil else {
            return .failsToMeetPolicy(reason: "leaf lacks Apple receipt-signing OID 1.2.840.113635.100.6.11.1")
        }
        guard chain[1].extensions[oid: Self.intermediateOID] != nil else {
            return .failsToMeetPolicy(reason: "intermediate lacks Apple WWDR OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}
