import BellkeysClassroom
import BellkeysSystem
import Glibc

// MARK: The loop (thread: server)

extension WebServer {
    func run() {
        defer { finished.store(true, ordering: .releasing) }
        var descriptors: [pollfd] = []
        while !stopRequested.load(ordering: .relaxed) {
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: link.serverDescriptor, events: Int16(POLLIN), revents: 0))
            for c in connections {
                descriptors.append(
                    pollfd(fd: c.fd, events: Int16(POLLIN) | (c.output.isEmpty ? 0 : Int16(POLLOUT)), revents: 0))
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), 20)
            let now = monotonicNanoseconds()
            if descriptors[1].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                _ = read(wake.read, &sink, 64)
            }
            if descriptors[2].revents != 0 { answerQueued(now: now) }
            handWaiting()
            // The connections polled (those accepted in this pass wait for the next).
            for (k, c) in connections.enumerated() where k + 3 < descriptors.count && descriptors[k + 3].fd == c.fd {
                let events = descriptors[k + 3].revents
                if events & Int16(POLLOUT) != 0 { flush(c) }
                if events & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 { receive(c, now: now) }
            }
            sweep(now: now)
            // New connections last: the ones that closed in this pass have made room.
            if descriptors[0].revents != 0 { acceptAll(now: now) }
            followSet()
            followTick(now: now)
            broadcastLit()
            updateTeachers(now: now)
        }
        for c in connections where c.role != .http {
            send(c, webSocketCloseFrame(WebSocketClose.goingAway, reason: "bellkeys stopped"))
        }
        for c in connections { drop(c, now: monotonicNanoseconds()) }
    }

    func acceptAll(now: UInt64) {
        // What each connection is doing, built at the first accept of the pass and kept in step.
        var held: [(peer: String, use: SlotUse)] = []
        var heldBuilt = false
        for _ in 0..<64 {
            var address = sockaddr_in(), length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listener, $0, &length)
                }
            }
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let peer = ipv4Text(address.sin_addr)
            var local = sockaddr_in(), localLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) }
            }
            let localText = ipv4Text(local.sin_addr)
            if !heldBuilt {
                held = connections.map { ($0.peer, slotUse($0)) }
                heldBuilt = true
            }
            // This machine itself (the teacher's) is not held to the per-address limit.
            switch slots.admit(peer: peer, trusted: peer == localText, among: held) {
            case .refuseAddress, .refuseFull:
                // Closed at once, so a flood cannot fill the backlog for the pupils behind it.
                Glibc.close(fd)
                connectionsRefused.add(1, ordering: .relaxed)
                teacherDirty = true
                continue
            case .admitInPlaceOf(let k):
                giveWay(connections[k], now: now)
                connections.remove(at: k)
                held.remove(at: k)
            case .admit:
                break
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            connections.append(Connection(id: nextConnection, fd: fd, peer: peer, local: localText, now: now))
            held.append((peer, .request))
            nextConnection += 1
            connectionsAccepted.add(1, ordering: .relaxed)
        }
    }

    /// What `c` is doing, for `slots`: whether it would give way to a new connection.
    func slotUse(_ c: Connection) -> SlotUse {
        if c.closeAfterWrite || c.fd < 0 { return .closing }
        switch c.role {
        case .http: return .request
        case .teacher: return .teacher
        case .pupil: return classroom.device(connection: c.id) == nil ? .unjoined : .joined
        }
    }

    /// Closes `c` at once (an unfinished request, or a pupil's socket that has not joined) to
    /// make room for a new connection; a socket is told why first, if its buffer takes it (the
    /// page comes back by itself).
    func giveWay(_ c: Connection, now: UInt64) {
        if c.role == .pupil, c.output.isEmpty {
            let frame = webSocketCloseFrame(WebSocketClose.tryAgainLater, reason: "too many connections; try again")
            _ = frame.withUnsafeBytes {
                Glibc.send(c.fd, $0.baseAddress, frame.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
        }
        connectionsGaveWay.add(1, ordering: .relaxed)
        teacherDirty = true
        drop(c, now: now)
    }

    func receive(_ c: Connection, now: UInt64) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(c.fd, &buffer, buffer.count, 0)
        if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) {
            drop(c, now: now)
            return
        }
        guard n > 0 else { return }
        if c.closeAfterWrite { return }
        c.input += buffer[0..<n]
        c.lastHeard = now
        switch c.role {
        case .http: readRequest(c, now: now)
        case .pupil, .teacher: readFrames(c, now: now)
        }
    }

    /// Timeouts: a request not finished in 10 s; a WebSocket silent for 30 s (a phone that
    /// went to sleep or left the Wi-Fi: its notes are released). Pings every 10 s keep a
    /// live page heard (browsers answer them by themselves).
    func sweep(now: UInt64) {
        for c in connections {
            switch c.role {
            case .http:
                if now &- c.opened > Self.requestTimeout, !c.closeAfterWrite { drop(c, now: now) }
            case .pupil, .teacher:
                if now &- c.lastHeard > Self.silenceTimeout {
                    closeWebSocket(c, code: WebSocketClose.goingAway, reason: "silent for 30 s", now: now)
                } else if c.role == .pupil, now &- c.upgraded > Self.silenceTimeout,
                    classroom.device(connection: c.id) == nil
                {
                    // A socket that never joins would hold a place for ever (the browser answers
                    // our pings by itself).
                    closeWebSocket(c, code: WebSocketClose.policy, reason: "join within 30 s", now: now)
                } else if now &- c.lastPing > Self.pingInterval {
                    c.lastPing = now
                    send(c, webSocketFrame(.ping, []))
                }
            }
            // (`since` may be later than this pass's `now`: closing began during the pass.)
            if c.closeAfterWrite, let since = c.closingSince, now > since &+ 2_000_000_000 {
                drop(c, now: now)
            } else if c.closeAfterWrite, c.output.isEmpty, c.fd >= 0 {
                if let since = c.lingerSince {
                    if now &- since > 1_000_000_000 { drop(c, now: now) }
                } else {
                    shutdown(c.fd, Int32(SHUT_WR))
                    c.lingerSince = now
                }
            }
        }
        connections.removeAll { $0.fd < 0 }
    }
}
