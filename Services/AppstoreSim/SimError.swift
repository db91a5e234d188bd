import Core
import Foundation
import Hummingbird

/// A request the simulator refuses: a stable machine `code`, a human message and the HTTP status. The
/// control API answers it as `{"error": {"code", "message"}}`.
struct SimError: TollgateError, Sendable, Equatable {
    var status: HTTPResponse.Status
    var code: String
    var message: String

    init(_ status: HTTPResponse.Status = .badRequest, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    static func invalid(_ message: String) -> SimError { SimError(.badRequest, "invalid_request", message) }

    static func transactionNotFound(_ id: String) -> SimError {
        SimError(.notFound, "transaction_not_found", "no transaction \(id) in the simulator")
    }

    /// The `{"error": {"code", "message"}}` response.
    var response: Response {
        struct Body: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
            }
            var error: Detail
        }
        return JSONBody.response(Body(error: .init(code: code, message: message)), status: status)
    }
}
