package import Foundation
package import HTTPClient

/// Calls Apple's App Store Server API with an ES256 JWT (signed with the `.p8` key, reused until shortly
/// before it expires). Signed data in the answers stays as raw JWS strings: verify them with the JWS
/// verifier before trusting them.
///
/// Every call throws ``AppStoreAPIError`` on failure (or `CancellationError` when its task is cancelled):
/// HTTP 429 (with `Retry-After`), 5xx, timeouts and connection failures are retryable; 401 is
/// `api_unauthorized`; other 4xx carry Apple's `errorCode` and `errorMessage`.
///
/// The client holds one transport (one connection pool) and one token for its whole life; share it.
package final class AppStoreServerAPIClient: Sendable {
    package let configuration: AppStoreServerAPIConfiguration
    let transport: any HTTPTransport
    let tokens: APITokenProvider
    let now: @Sendable () -> Date

    /// - Throws: ``AppStoreAPIError`` with code `api_invalid_configuration` when the key does not parse,
    ///   an identifier is empty, or the environment has no server API (Xcode, local testing).
    package init(
        configuration: AppStoreServerAPIConfiguration,
        transport: any HTTPTransport = CurlTransport(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(AppStoreAPIError) {
        guard configuration.environment == .production || configuration.environment == .sandbox else {
            throw AppStoreAPIError(
                .invalidConfiguration, "the App Store Server API has no \(configuration.environment) environment",
                isRetryable: false)
        }
        self.configuration = configuration
        self.transport = transport
        self.tokens = try APITokenProvider(configuration: configuration, now: now)
        self.now = now
    }

    /// Calls one endpoint and decodes its JSON answer.
    func call<Response: Decodable>(
        _ method: HTTPTransportRequest.Method, _ path: String, query: [URLQueryItem] = [], body: Data? = nil,
        as type: Response.Type
    ) async throws -> Response {
        let response = try await send(method, path, query: query, body: body)
        do {
            return try JSONDecoder().decode(Response.self, from: response.body)
        } catch {
            throw AppStoreAPIError(
                .badResponse, "\(method.rawValue) \(path) answered with a body that is not a \(Response.self)",
                isRetryable: true, httpStatus: response.status)
        }
    }

    /// Calls one endpoint; returns its 2xx response, throws ``AppStoreAPIError`` for anything else.
    @discardableResult
    func send(
        _ method: HTTPTransportRequest.Method, _ path: String, query: [URLQueryItem] = [], body: Data? = nil
    ) async throws -> HTTPTransportResponse {
        let url = try url(path, query: query)
        let token: String
        do {
            token = try await tokens.token()
        } catch {
            throw AppStoreAPIError(.invalidConfiguration, "the API token could not be signed: \(error)", isRetryable: false)
        }
        var headers = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
        if body != nil { headers["Content-Type"] = "application/json" }
        let request = HTTPTransportRequest(
            method: method, url: url, headers: headers, body: body, timeout: configuration.timeout)
        let response: HTTPTransportResponse
        do {
            response = try await transport.send(request)
        } catch let error as HTTPTransportError {
            throw Self.transportFailure(error, method: method, path: path)
        }
        if (200...299).contains(response.status) { return response }
        if response.status == 401 { await tokens.discard() }
        throw Self.httpFailure(response, method: method, path: path, now: now())
    }

    /// `baseURL` + `path` + query. Path segments the caller passes must already be escaped.
    func url(_ path: String, query: [URLQueryItem]) throws -> URL {
        var base = configuration.baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard var components = URLComponents(string: base + path) else {
            throw AppStoreAPIError(.invalidConfiguration, "the base URL \(base) is not usable", isRetryable: false)
        }
        if !query.isEmpty { components.queryItems = query }
        guard let url = components.url else {
            throw AppStoreAPIError(.invalidConfiguration, "the base URL \(base) is not usable", isRetryable: false)
        }
        return url
    }

    /// An identifier escaped as one path segment; empty identifiers are refused.
    func segment(_ identifier: String, _ name: String) throws -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#%")
        guard !identifier.isEmpty, let escaped = identifier.addingPercentEncoding(withAllowedCharacters: allowed) else {
            throw AppStoreAPIError(.invalidRequest, "the \(name) is empty", isRetryable: false)
        }
        return escaped
    }

    /// JSON for a request body.
    func encode(_ value: some Encodable) throws -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw AppStoreAPIError(.invalidRequest, "the request body could not be encoded", isRetryable: false)
        }
    }
}
