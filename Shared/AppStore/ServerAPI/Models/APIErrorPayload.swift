/// The body of an App Store Server API error response: Apple's `ErrorPayload`.
public struct APIErrorPayload: Codable, Sendable, Hashable {
    public var errorCode: Int?
    public var errorMessage: String?

    public init(errorCode: Int? = nil, errorMessage: String? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}
