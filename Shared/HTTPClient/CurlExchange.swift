import CCurl
import Foundation
import Synchronization

/// One request on libcurl: its configured easy handle, the response as it arrives, and the continuation waiting
/// for it. Whichever comes first — the transfer's end, the deadline, or cancellation — resumes the continuation,
/// exactly once.
///
/// `@unchecked Sendable` is safe: the continuation and whether the caller cancelled or has its answer live in
/// `waiter` (a `Mutex`), and the continuation is taken out under its lock before it is resumed. The response
/// (`status`, `headers`, `body`, `received`, `tooLarge`) is written by libcurl's callbacks and read by
/// ``complete(_:)``, all on the loop's thread. The handle, header list and error buffer are set in `init` and
/// freed in `deinit`, which runs only once the loop has let go of the exchange (the loop holds it while the
/// handle is in the multi handle).
final class CurlExchange: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    let deadline: ContinuousClock.Instant
    let timeout: Duration
    private let headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let maximumResponseSize: Int

    private var headers: [String: String] = [:]
    private var body = Data()
    private var received = 0
    private var tooLarge = false

    private struct Waiter {
        var continuation: CheckedContinuation<HTTPTransportResponse, any Error>?
        var cancelled = false
        var finished = false
    }

    private let waiter = Mutex(Waiter())

    init(request: HTTPTransportRequest, maximumResponseSize: Int) throws {
        let headerList = try Self.headerList(request.headers)
        guard let easy = curl_easy_init() else {
            curl_slist_free_all(headerList)
            throw HTTPTransportError(.failed, "libcurl could not create a transfer")
        }
        self.easy = easy
        self.headerList = headerList
        self.timeout = request.timeout
        self.deadline = ContinuousClock.now + request.timeout
        self.maximumResponseSize = maximumResponseSize
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try configure(request)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Whether the caller has had its answer (or was cancelled).
    var isFinished: Bool {
        waiter.withLock { $0.finished }
    }

    /// Keeps the continuation; `false` (and the continuation resumed with `CancellationError`) when the task
    /// was cancelled first.
    func start(_ continuation: CheckedContinuation<HTTPTransportResponse, any Error>) -> Bool {
        let started = waiter.withLock { waiter in
            guard !waiter.cancelled else {
                waiter.finished = true
                return false
            }
            waiter.continuation = continuation
            return true
        }
        if !started { continuation.resume(throwing: CancellationError()) }
        return started
    }

    /// The calling task was cancelled: resumes the caller with `CancellationError` now. `true` when the transfer
    /// had started and the loop must drop it.
    func cancel() -> Bool {
        let waiting = waiter.withLock { waiter in
            waiter.cancelled = true
            waiter.finished = true
            defer { waiter.continuation = nil }
            return waiter.continuation
        }
        guard let waiting else { return false }
        waiting.resume(throwing: CancellationError())
        return true
    }

    /// Resumes the caller, unless it already has its answer.
    func finish(_ outcome: Result<HTTPTransportResponse, any Error>) {
        let waiting = waiter.withLock { waiter in
            waiter.finished = true
            defer { waiter.continuation = nil }
            return waiter.continuation
        }
        waiting?.resume(with: outcome)
    }

    /// The transfer ended with `result` (loop thread): the response, or why there is none.
    func complete(_ result: CURLcode) {
        guard result == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            finish(.failure(CurlErrors.transportError(result, detail: detail, tooLarge: tooLarge, limit: maximumResponseSize)))
            return
        }
        var status = 0
        _ = tg_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        guard (100...999).contains(status) else {
            finish(.failure(HTTPTransportError(.invalidResponse, "the response has no HTTP status")))
            return
        }
        finish(.success(HTTPTransportResponse(status: status, headers: headers, body: body)))
    }

    // MARK: - Callbacks (loop thread)

    /// Takes one chunk of the body; `0` (libcurl then aborts) when the response grows past its limit.
    fileprivate func receiveBody(_ data: UnsafeRawBufferPointer) -> Int {
        received += data.count
        guard received <= maximumResponseSize else {
            tooLarge = true
            return 0
        }
        if let base = data.baseAddress {
            body.append(base.assumingMemoryBound(to: UInt8.self), count: data.count)
        }
        return data.count
    }

    /// Takes one header line (`Name: value\r\n`); a status line starts a new response (after a `100 Continue`).
    fileprivate func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        received += line.count
        guard received <= maximumResponseSize else {
            tooLarge = true
            return 0
        }
        if line.starts(with: "HTTP/".utf8) {
            headers.removeAll()
        } else if let field = HeaderLine.parse(line) {
            headers[field.name] = headers[field.name].map { "\($0), \(field.value)" } ?? field.value
        }
        return line.count
    }
}

extension CurlExchange {
    /// Sets the easy handle's options for `request`.
    private func configure(_ request: HTTPTransportRequest) throws {
        let me = Unmanaged.passUnretained(self).toOpaque()
        var codes: [CURLcode] = [
            tg_curl_easy_setopt_string(easy, CURLOPT_URL, request.url.absoluteString),
            tg_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"),
            tg_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1),
            tg_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, tg_curl_http_version_2tls()),
            tg_curl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1),
            tg_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1),
            tg_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2),
            tg_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1),
            tg_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout)),
            tg_curl_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maximumResponseSize)),
            tg_curl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""),
            tg_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer),
            tg_curl_easy_setopt_callback(
                easy, CURLOPT_WRITEFUNCTION,
                { data, size, count, userdata in
                    guard let data, let userdata else { return 0 }
                    let exchange = Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue()
                    return exchange.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
                }),
            tg_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me),
            tg_curl_easy_setopt_callback(
                easy, CURLOPT_HEADERFUNCTION,
                { data, size, count, userdata in
                    guard let data, let userdata else { return 0 }
                    let exchange = Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue()
                    return exchange.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
                }),
            tg_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me),
            tg_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList),
        ]
        switch request.method {
        case .get:
            codes.append(tg_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1))
        case .post, .put:
            if request.method == .put {
                codes.append(tg_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, "PUT"))
            }
            let body = request.body ?? Data()
            codes.append(tg_curl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            codes.append(
                body.withUnsafeBytes { bytes in
                    // libcurl copies the bytes; an empty body still needs a valid pointer.
                    guard let base = bytes.baseAddress else { return tg_curl_easy_setopt_string(easy, CURLOPT_COPYPOSTFIELDS, "") }
                    return tg_curl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base))
                })
        }
        if let failed = codes.first(where: { $0 != CURLE_OK }) {
            throw HTTPTransportError(.failed, "libcurl refused an option: \(String(cString: curl_easy_strerror(failed)))")
        }
    }

    /// The request headers as libcurl's list; `Expect:` turns off `100-continue` waits on larger bodies.
    private static func headerList(_ headers: [String: String]) throws -> UnsafeMutablePointer<curl_slist>? {
        var lines = headers.map { name, value in value.isEmpty ? "\(name);" : "\(name): \(value)" }
        if !headers.keys.contains(where: { $0.lowercased() == "expect" }) { lines.append("Expect:") }
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard !line.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                curl_slist_free_all(list)
                throw HTTPTransportError(.failed, "a request header contains a line break")
            }
            guard let longer = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                throw HTTPTransportError(.failed, "libcurl could not store the request headers")
            }
            list = longer
        }
        return list
    }

    /// A timeout in whole milliseconds, rounded up, at least one.
    static func milliseconds(_ duration: Duration) -> Int {
        let parts = duration.components
        let milliseconds = parts.seconds * 1000 + (parts.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(max(1, milliseconds))
    }
}
