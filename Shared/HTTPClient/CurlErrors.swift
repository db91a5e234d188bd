import CCurl

/// libcurl's result codes as ``HTTPTransportError``s, with the same meaning ``URLSessionTransport`` gives the
/// `URLError`s Foundation makes of them.
enum CurlErrors {
    /// - Parameters:
    ///   - detail: libcurl's error buffer (host, port, what failed; never a body or a header value).
    ///   - tooLarge: the response passed `limit` and the transfer was stopped for it.
    static func transportError(_ code: CURLcode, detail: String, tooLarge: Bool, limit: Int) -> HTTPTransportError {
        if tooLarge || code == CURLE_FILESIZE_EXCEEDED {
            return HTTPTransportError(.invalidResponse, "the response is larger than \(limit) bytes")
        }
        let what = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        let message = "\(what) (curl \(code.rawValue))"
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPTransportError(.timeout, message)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_SEND_ERROR,
            CURLE_RECV_ERROR, CURLE_GOT_NOTHING:
            return HTTPTransportError(.connectionFailed, message)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            return HTTPTransportError(.tlsFailed, message)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_PARTIAL_FILE, CURLE_BAD_CONTENT_ENCODING,
            CURLE_HTTP3, CURLE_TOO_MANY_REDIRECTS:
            return HTTPTransportError(.invalidResponse, message)
        default:
            return HTTPTransportError(.failed, message)
        }
    }
}
