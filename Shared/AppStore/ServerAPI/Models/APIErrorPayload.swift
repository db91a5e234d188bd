/// The body of an App Store Server API error response: Apple's `ErrorPayload`.
package struct APIErrorPayload: Codable, Sendable, Hashable {
    package var errorCode: Int?
    package var errorMessage: String?

    package init(errorCode: Int? = nil, errorMessage: String? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}
