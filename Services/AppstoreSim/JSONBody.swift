import Foundation
import Hummingbird

/// JSON in and out of the simulator's handlers.
enum JSONBody {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }

    /// An `application/json` response with `value` encoded.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? encoder().encode(value)) ?? Data("{}".utf8)
        return response(data: data, status: status)
    }

    /// An `application/json` response with these bytes.
    static func response(data: Data, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The request body decoded as `T`; a `400 invalid_json` error when it is not.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws(SimError) -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: 1 << 20)
        } catch {
            throw SimError(.contentTooLarge, "body_too_large", "the request body is larger than 1 MiB")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw SimError(.badRequest, "invalid_json", describe(error))
        } catch {
            throw SimError(.badRequest, "invalid_json", "the body is not valid JSON")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map(\.stringValue).joined(separator: ".")
            return joined.isEmpty ? "the body" : "'\(joined)'"
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "missing field '\(parent.isEmpty ? key.stringValue : parent + "." + key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "the body is not valid JSON" : "\(path(context)) is invalid"
        @unknown default:
            return "the body could not be read"
        }
    }
}
