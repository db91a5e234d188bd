import CHiredis
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One resolved address to try.
struct SocketAddress {
    let family: Int32
    let bytes: [UInt8]
}

/// The channel's socket: non-blocking connect, handshake, reads into hiredis' reply reader, writes, and the
/// epoll interest that follows them. Loop thread only.
extension RedisChannel {
    func beginConnect() {
        let delay = backoff.delay()
        if delay > .zero {
            state = .waiting(until: .now + delay)
        } else {
            connectNow()
        }
    }

    func connectNow() {
        let deadline = ContinuousClock.now + configuration.connectTimeout
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(configuration.host, String(configuration.port), &hints, &list)
        guard status == 0 else {
            return connectFailed(.connectionFailed("\(endpoint): \(String(cString: gai_strerror(status)))"))
        }
        var addresses: [SocketAddress] = []
        var node = list
        while let current = node {
            if let address = current.pointee.ai_addr {
                let bytes = UnsafeRawBufferPointer(start: address, count: Int(current.pointee.ai_addrlen))
                addresses.append(SocketAddress(family: current.pointee.ai_family, bytes: Array(bytes)))
            }
            node = current.pointee.ai_next
        }
        freeaddrinfo(list)
        state = .connecting(deadline: deadline, addresses: addresses)
        attemptNextAddress(lastError: "no address")
    }

    /// Tries the next resolved address; fails the connect when none is left.
    private func attemptNextAddress(lastError: String) {
        guard case .connecting(let deadline, var addresses) = state else { return }
        guard !addresses.isEmpty else { return connectFailed(.connectionFailed("\(endpoint): \(lastError)")) }
        let address = addresses.removeFirst()
        state = .connecting(deadline: deadline, addresses: addresses)
        let descriptor = Glibc.socket(
            address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return attemptNextAddress(lastError: Self.errorText(tg_errno())) }
        socket = descriptor
        let result = address.bytes.withUnsafeBytes { bytes in
            Glibc.connect(descriptor, bytes.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
        if result == 0 { return connected() }
        let error = tg_errno()
        if error == EINPROGRESS { return }  // the loop waits for it to become writable
        closeSocket()
        attemptNextAddress(lastError: Self.errorText(error))
    }

    private func connected() {
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, size)
        _ = setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &one, size)
        var idle: Int32 = 15
        var interval: Int32 = 5
        var probes: Int32 = 3
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, size)
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, size)
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_KEEPCNT, &probes, size)
        reader = redisReaderCreate()
        let commands = handshake
        guard !commands.isEmpty else { return becomeReady() }
        state = .handshaking
        for command in commands { RESPEncoder.append(command, to: &output) }
        inFlight.append(
            InFlight(
                job: nil, expected: commands.count, deadline: .now + configuration.commandTimeout,
                names: commands.map(\.name).joined(separator: ", ")))
        writeOutput()
    }

    /// What epoll reported for the socket.
    func handle(events: UInt32, buffer: UnsafeMutableRawBufferPointer) {
        switch state {
        case .connecting:
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) != 0 { error = tg_errno() }
            if error == 0 {
                connected()
            } else {
                closeSocket()
                attemptNextAddress(lastError: Self.errorText(error))
            }
        case .handshaking, .ready:
            if events & EPOLLOUT.rawValue != 0 { writeOutput() }
            if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { readInput(buffer) }
        case .idle, .waiting, .shut:
            break
        }
    }

    /// Writes as much of the output as the socket takes now.
    func writeOutput() {
        while written < output.count {
            let sent = output.withUnsafeBytes { bytes in
                Glibc.send(socket, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                written += sent
                continue
            }
            let error = tg_errno()
            if sent < 0 && error == EINTR { continue }
            if sent < 0 && (error == EAGAIN || error == EWOULDBLOCK) { return }
            return drop(Self.errorText(error))
        }
        let keep = output.capacity <= 1 << 20
        output.removeAll(keepingCapacity: keep)
        written = 0
    }

    /// Reads what arrived and hands each complete reply to its job.
    private func readInput(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let reader else { return }
        while true {
            let received = Glibc.recv(socket, buffer.baseAddress, buffer.count, 0)
            if received > 0 {
                _ = redisReaderFeed(reader, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), received)
                if received < buffer.count { break }
                continue
            }
            if received == 0 { return drop("connection closed by the server") }
            let error = tg_errno()
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK { break }
            return drop(Self.errorText(error))
        }
        while self.reader == reader {
            var raw: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &raw) == REDIS_OK else {
                let text = withUnsafeBytes(of: reader.pointee.errstr) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                return drop("protocol error: \(text)")
            }
            guard let raw else { return }
            let reply = RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self))
            freeReplyObject(raw)
            deliver(reply)
        }
    }

    /// Closes the socket (which leaves epoll with it) and forgets partial input and output.
    func closeSocket() {
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
        interest = 0
        if let reader { redisReaderFree(reader) }
        reader = nil
        output.removeAll(keepingCapacity: false)
        written = 0
        holding = false
    }

    /// Watches the socket for what the state needs: writability while connecting or with output left, and
    /// readability only while replies are awaited (an idle connection that the server closed is noticed by
    /// the next command, as an unknown outcome, like a blocking client).
    func updateInterest(epoll: Int32) {
        var wanted: UInt32 = 0
        switch state {
        case .connecting: wanted = EPOLLOUT.rawValue
        case .handshaking, .ready:
            if !inFlight.isEmpty { wanted |= EPOLLIN.rawValue }
            if written < output.count { wanted |= EPOLLOUT.rawValue }
        case .idle, .waiting, .shut: wanted = 0
        }
        guard socket >= 0, wanted != interest else { return }
        let operation = interest == 0 ? EPOLL_CTL_ADD : (wanted == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD)
        if tg_epoll_set(epoll, operation, socket, wanted, id) == 0 { interest = wanted }
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
