import CCurl
import Core
import Foundation
import Synchronization

/// One libcurl multi handle and the thread that drives it: requests arrive through a locked queue, and the
/// thread adds and removes easy handles, runs the transfers (`curl_multi_perform`), waits in `curl_multi_poll`
/// (woken by `curl_multi_wakeup` when the queue changes) and completes each exchange when its transfer ends or
/// its deadline passes.
///
/// `@unchecked Sendable` is safe: the queued commands and the stop request live in `queue` (a `Mutex`);
/// `active` and every call on `multi` but `curl_multi_wakeup` (which libcurl allows from any thread) happen on
/// the loop's thread only; `multi` is freed by that thread after it has stopped taking commands, and ``add(_:)``
/// and ``remove(_:)`` are only called while the owning ``CurlTransport`` is alive, before ``shutDown()``.
final class CurlLoop: @unchecked Sendable {
    private enum Command {
        case add(CurlExchange)
        case remove(CurlExchange)
    }

    private let multi: UnsafeMutableRawPointer
    /// Commands not yet taken by the loop thread, and whether it is to stop.
    private let queue = Mutex((commands: [Command](), stopping: false))
    /// The transfers in the multi handle, by easy handle. Loop thread only.
    private var active: [UnsafeMutableRawPointer: CurlExchange] = [:]

    init?(maximumConnectionsPerHost: Int) {
        guard let multi = curl_multi_init() else { return nil }
        _ = tg_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        // Idle connections kept for reuse, across hosts (production, sandbox, the API, OCSP responders).
        _ = tg_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, 2 * maximumConnectionsPerHost))
        _ = tg_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, tg_curl_pipe_multiplex())
        self.multi = multi
        let thread = Thread { [self] in
            setCurrentThreadName("tg-curl")
            run()
        }
        thread.start()
    }

    /// Hands a configured exchange to the loop.
    func add(_ exchange: CurlExchange) {
        enqueue(.add(exchange))
    }

    /// Takes a cancelled exchange's transfer out of the multi handle.
    func remove(_ exchange: CurlExchange) {
        enqueue(.remove(exchange))
    }

    /// Stops the thread; transfers still running (there are none while a caller holds the transport) fail.
    func shutDown() {
        queue.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    private func enqueue(_ command: Command) {
        queue.withLock { $0.commands.append(command) }
        curl_multi_wakeup(multi)
    }

    private func takeCommands() -> ([Command], stop: Bool) {
        queue.withLock { queue in
            let taken = queue.commands
            queue.commands.removeAll(keepingCapacity: true)
            return (taken, queue.stopping)
        }
    }

    private func run() {
        var running: Int32 = 0
        while true {
            let (taken, stop) = takeCommands()
            for command in taken { apply(command) }
            if stop { break }
            curl_multi_perform(multi, &running)
            collectFinished()
            expireOverdue()
            curl_multi_poll(multi, nil, 0, pollTimeout(), nil)
        }
        for (easy, exchange) in active {
            curl_multi_remove_handle(multi, easy)
            exchange.finish(.failure(HTTPTransportError(.failed, "the transport was shut down")))
        }
        active.removeAll()
        curl_multi_cleanup(multi)
    }

    private func apply(_ command: Command) {
        switch command {
        case .add(let exchange):
            guard !exchange.isFinished else { return }  // cancelled while queued
            guard curl_multi_add_handle(multi, exchange.easy) == CURLM_OK else {
                exchange.finish(.failure(HTTPTransportError(.failed, "libcurl refused the transfer")))
                return
            }
            active[exchange.easy] = exchange
        case .remove(let exchange):
            if active.removeValue(forKey: exchange.easy) != nil {
                curl_multi_remove_handle(multi, exchange.easy)
            }
        }
    }

    /// Completes every transfer libcurl reports done.
    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard tg_curl_msg_is_done(message) != 0, let easy = message.pointee.easy_handle else { continue }
            let result = tg_curl_msg_result(message)
            guard let exchange = active.removeValue(forKey: easy) else { continue }
            curl_multi_remove_handle(multi, easy)
            exchange.complete(result)
        }
    }

    /// Fails the transfers whose deadline has passed, whatever libcurl's timers say.
    private func expireOverdue() {
        let now = ContinuousClock.now
        for (easy, exchange) in active where exchange.deadline <= now {
            active.removeValue(forKey: easy)
            curl_multi_remove_handle(multi, easy)
            exchange.finish(.failure(HTTPTransportError(.timeout, "no response within \(exchange.timeout)")))
        }
    }

    /// Milliseconds until the nearest deadline (rounded up), at most one second.
    private func pollTimeout() -> Int32 {
        guard let nearest = active.values.lazy.map(\.deadline).min() else { return 1000 }
        let remaining = (nearest - ContinuousClock.now).components
        let milliseconds = remaining.seconds * 1000 + (remaining.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, min(1000, milliseconds)))
    }
}
