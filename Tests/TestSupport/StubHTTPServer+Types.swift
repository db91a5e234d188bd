package import Core
package import Foundation

/// One scripted answer of a ``StubHTTPServer``.
package struct StubResponse: Sendable {
    package var status: Int
    package var headers: [String: String]
    package var body: Data
    /// Wait this long before answering (to provoke client timeouts).
    package var delay: Duration?

    package init(status: Int, headers: [String: String] = [:], body: Data = Data(), delay: Duration? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
    }

    /// A JSON answer.
    package static func json(_ text: String, status: Int = 200, headers: [String: String] = [:], delay: Duration? = nil) -> StubResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        return StubResponse(status: status, headers: headers, body: Data(text.utf8), delay: delay)
    }

    /// A JSON answer from an `Encodable` value.
    package static func json(encoding value: some Encodable, status: Int = 200) -> StubResponse {
        let body = (try? JSONEncoder().encode(value)) ?? Data()
        return StubResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }
}

/// One request a ``StubHTTPServer`` received.
package struct StubRecordedRequest: Sendable {
    package var method: String
    package var path: String
    /// The raw query string, without `?`.
    package var query: String?
    /// Header values by lowercased name.
    package var headers: [String: String]
    /// The client's TCP port: equal for requests sent over one kept-alive connection.
    package var remotePort: Int?
    package var body: Data

    /// The value of a query parameter.
    package func queryItem(_ name: String) -> String? {
        URLComponents(string: "http://stub/?\(query ?? "")")?.queryItems?.first { $0.name == name }?.value
    }

    /// The body read as a JSON object by Core's reader, or `nil`.
    package func jsonBody() -> [String: JSONValue]? {
        JSONValue.read(body)?.members
    }
}
