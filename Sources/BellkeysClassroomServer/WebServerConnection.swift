import BellkeysClassroom
import BellkeysControl
import BellkeysSystem
import Glibc

extension WebServer {
    enum Role { case http, pupil, teacher }

    final class Connection {
        let id: Int
        /// -1 once closed.
        var fd: Int32
        /// The peer's address, and the address it reached (the same when the peer is this machine).
        let peer: String
        let local: String
        var role = Role.http
        var input: [UInt8] = []
        var output: [UInt8] = []
        var closeAfterWrite = false {
            didSet { if closeAfterWrite, closingSince == nil { closingSince = monotonicNanoseconds() } }
        }
        /// When closing began: dropped 2 s later whatever is still unsent (a peer that stops
        /// reading must not keep its place).
        var closingSince: UInt64?
        /// How far the request head has been searched for its end.
        var scanned = 0
        /// When the output was flushed and our side shut down: what the peer still sends is
        /// read and dropped (closing with unread input would reset the connection, and the
        /// peer would lose the close frame and the replies before it) until it closes, or 1 s.
        var lingerSince: UInt64?
        let opened: UInt64
        var lastHeard: UInt64
        var lastPing: UInt64
        /// When it became a WebSocket: a pupil's must join within 30 s.
        var upgraded: UInt64 = 0
        var messages: StrikeLimiter
        init(id: Int, fd: Int32, peer: String, local: String, now: UInt64) {
            self.id = id
            self.fd = fd
            self.peer = peer
            self.local = local
            opened = now
            lastHeard = now
            lastPing = now
            messages = StrikeLimiter(perSecond: 50, burst: 100)
        }
    }
}

// MARK: Writing and closing (thread: server)

extension WebServer {
    func respond(_ c: Connection, status: Int, text: String, headers: [HTTPHeader] = [], omitBody: Bool = false) {
        respond(
            c, status: status, type: "text/plain; charset=utf-8", body: Array((text + "\n").utf8), headers: headers,
            omitBody: omitBody)
    }

    func respond(
        _ c: Connection, status: Int, type: String, body: [UInt8], headers: [HTTPHeader] = [], omitBody: Bool = false
    ) {
        send(c, httpResponse(status: status, contentType: type, body: body, extraHeaders: headers, omitBody: omitBody))
        c.closeAfterWrite = true
        c.input.removeAll()
    }

    func send(_ c: Connection, text: String) { send(c, webSocketFrame(.text, Array(text.utf8))) }

    /// Sends now what the socket takes, keeping the rest for POLLOUT; a reader that falls
    /// 256 KiB behind is dropped.
    func send(_ c: Connection, _ bytes: [UInt8]) {
        // Nothing after our close frame or response (RFC 6455 5.5.1).
        guard c.fd >= 0, !c.closeAfterWrite else { return }
        if c.output.isEmpty {
            let n = bytes.withUnsafeBytes {
                Glibc.send(c.fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if n == bytes.count { return }
            c.output = Array(bytes[max(0, n)...])
        } else {
            c.output += bytes
        }
        if c.output.count > Self.maximumOutput { drop(c, now: monotonicNanoseconds()) }
    }

    func flush(_ c: Connection) {
        guard c.fd >= 0, !c.output.isEmpty else { return }
        let n = c.output.withUnsafeBytes {
            Glibc.send(c.fd, $0.baseAddress, c.output.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        if n > 0 {
            c.output.removeFirst(n)
        } else if n < 0, errno != EAGAIN, errno != EINTR {
            drop(c, now: monotonicNanoseconds())
        }
    }

    func malformed(_ c: Connection, code: UInt16, reason: String, now: UInt64) {
        malformedClosed.add(1, ordering: .relaxed)
        classroom.counters.malformed += 1
        closeWebSocket(c, code: code, reason: reason, now: now)
    }

    /// Sends a close frame, then closes once it is written. The device leaves the room now.
    func closeWebSocket(_ c: Connection, code: UInt16, reason: String, now: UInt64, leave: Bool = true) {
        guard !c.closeAfterWrite else { return }
        send(c, webSocketCloseFrame(code, reason: reason))
        c.closeAfterWrite = true
        c.input.removeAll()
        if leave { left(c, now: now) }
    }

    /// The device of `c` leaves the room: the control thread releases what it holds.
    func left(_ c: Connection, now: UInt64) {
        if let id = classroom.leave(connection: c.id) {
            hand(.gone(device: id, arrival: MonotonicInstant(nanoseconds: now)))
            joinedNow.store(classroom.devices.count, ordering: .relaxed)
            teacherDirty = true
        }
        if c.role == .teacher { teacherDirty = true }
    }

    func drop(_ c: Connection, now: UInt64) {
        guard c.fd >= 0 else { return }
        left(c, now: now)
        Glibc.close(c.fd)
        c.fd = -1
    }
}
