import BellkeysClassroom
import BellkeysSystem
import Glibc

// MARK: Requests and routes (thread: server)

extension WebServer {
    func readRequest(_ c: Connection, now: UInt64) {
        // Read the head only once its blank line is in, a bare LF shows it is wrong, or it is
        // over the limit: a head sent a byte at a time is then searched once, not read again
        // from its start for every byte.
        var due = c.input.count > HTTPRequestHead.maximumBytes
        var k = c.scanned
        while !due, k < c.input.count {
            if c.input[k] == 10 {
                due = k == 0 || c.input[k - 1] != 13 || (k >= 3 && c.input[k - 2] == 10 && c.input[k - 3] == 13)
            }
            k += 1
        }
        c.scanned = c.input.count
        if due { scanHead(c, now: now) }
    }

    func scanHead(_ c: Connection, now: UInt64) {
        switch scanHTTPRequestHead(c.input[...]) {
        case .incomplete:
            return
        case .refused(let status, let reason):
            httpRefused.add(1, ordering: .relaxed)
            respond(c, status: status, text: reason)
        case .complete(let head, let length):
            c.input.removeFirst(length)
            route(c, head, now: now)
        }
    }

    /// Whether `c` is the teacher: from this machine (the peer's address is the one it
    /// reached, which a pupil's phone cannot make so), or with the teacher key.
    func isTeacher(_ c: Connection, _ head: HTTPRequestHead) -> Bool {
        if c.peer == c.local { return true }
        guard let key = head.query("key") else { return false }
        let a = Array(key.utf8), b = Array(settings.teacherKey.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    /// Whether the Host names this server as a pupil would reach it: an IPv4 address, or this
    /// machine's name (a page from another site that resolves its own name to this address,
    /// DNS rebinding, is refused).
    func hostIsOurs(_ head: HTTPRequestHead) -> Bool {
        guard let host = head.header("host")?.lowercased() else { return head.version == "HTTP/1.0" }
        let name = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        var address = in_addr()
        return inet_pton(AF_INET, String(name), &address) == 1 || hostNames.contains(String(name))
    }

    func route(_ c: Connection, _ head: HTTPRequestHead, now: UInt64) {
        guard hostIsOurs(head) else {
            httpRefused.add(1, ordering: .relaxed)
            respond(
                c, status: 421,
                text: "This server answers to its IP address; open the address the teacher's screen shows.")
            return
        }
        let omit = head.method == "HEAD"
        switch head.path {
        case "/", "/index.html":
            respond(c, status: 200, type: "text/html; charset=utf-8", body: pages.pupil, omitBody: omit)
        case "/teacher":
            if isTeacher(c, head) {
                respond(c, status: 200, type: "text/html; charset=utf-8", body: pages.teacher, omitBody: omit)
            } else {
                respond(c, status: 403, type: "text/html; charset=utf-8", body: pages.notTeacher, omitBody: omit)
            }
        case "/qr.svg":
            respond(c, status: 200, type: "image/svg+xml", body: pages.qrSVG, omitBody: omit)
        case "/ws", "/teacher/ws":
            let teacher = head.path == "/teacher/ws"
            if teacher, !isTeacher(c, head) {
                httpRefused.add(1, ordering: .relaxed)
                respond(c, status: 403, text: "only the teacher's computer, or a page opened with the teacher key")
                return
            }
            let key: String
            do {
                key = try webSocketKey(for: head)
            } catch {
                httpRefused.add(1, ordering: .relaxed)
                respond(
                    c, status: error.status, text: error.reason,
                    headers: error.status == 426 ? [HTTPHeader(name: "Sec-WebSocket-Version", value: "13")] : [])
                return
            }
            let accept = webSocketAccept(key: key)
            c.role = teacher ? .teacher : .pupil
            c.lastPing = now
            c.upgraded = now
            send(c, webSocketUpgradeResponse(accept: accept))
            if teacher {
                teacherDirty = true
            } else {
                send(c, text: Classroom.litJSON(lastLit))
            }
            // Frames sent right behind the request.
            if !c.input.isEmpty { readFrames(c, now: now) }
        case "/favicon.ico":
            respond(c, status: 204, type: "image/x-icon", body: [], omitBody: omit)
        default:
            respond(c, status: 404, text: "Not here: open / to ring the bells.", omitBody: omit)
        }
    }

    func readFrames(_ c: Connection, now: UInt64) {
        let maximum = c.role == .teacher ? TeacherMessage.maximumBytes : PupilMessage.maximumBytes
        while !c.input.isEmpty, !c.closeAfterWrite {
            switch scanWebSocketFrame(c.input[...], maximumPayload: maximum) {
            case .incomplete:
                return
            case .refused(let code, let reason):
                malformed(c, code: code, reason: reason, now: now)
                return
            case .frame(let opcode, let payload, let length):
                c.input.removeFirst(length)
                guard c.messages.allow(at: now) else {
                    floodClosed.add(1, ordering: .relaxed)
                    closeWebSocket(c, code: WebSocketClose.policy, reason: "more than 50 messages a second", now: now)
                    return
                }
                switch opcode {
                case .ping: send(c, webSocketFrame(.pong, payload))
                case .pong: break
                case .close:
                    closeWebSocket(c, code: WebSocketClose.normal, reason: "", now: now)
                    return
                default:
                    if c.role == .teacher {
                        teacherMessage(c, payload, now: now)
                    } else {
                        pupilMessage(c, payload, now: now)
                    }
                }
            }
        }
    }
}
