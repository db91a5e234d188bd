/// The answer of a mass extension request: Apple's `MassExtendRenewalDateResponse`.
package struct MassExtendRenewalDateResponse: Codable, Sendable, Hashable {
    package var requestIdentifier: String

    package init(requestIdentifier: String) {
        self.requestIdentifier = requestIdentifier
    }
}
