import BellkeysClassroom
import Glibc
import Synchronization

/// The classroom's web server: the pupils' page, the teacher's page, the QR code and their
/// WebSockets, on one thread of its own with one poll loop (as the rest of bellkeys: no
/// framework, no thread pool). It never runs on the render thread and never waits for the
/// control thread: what the phones play crosses through `ClassroomLink`'s non-blocking pipe.
///
/// Everything that arrives is hostile until read: request heads (`scanHTTPRequestHead`),
/// frames (`scanWebSocketFrame`) and messages (`readPupilMessage`, `readTeacherMessage`) are
/// read strictly, within fixed limits, and anything wrong closes that connection and is
/// counted. Connections are capped (`maximumConnections`; past that, closed at once); a
/// connection that has not finished its request in 10 s, a WebSocket silent for 30 s, a pupil's
/// that has not joined in 30 s, or one
/// whose unread output passes 256 KiB is closed; each connection may send at most 50
/// messages a second (burst 100) of any kind, and each device 10 strikes a second (the
/// classroom's limit).
public final class WebServer: @unchecked Sendable {
    public struct Settings: Sendable {
        /// The address to listen on: "0.0.0.0" for every interface, or one of this machine's.
        public var listenAddress = "0.0.0.0"
        /// The port; 0 takes a free one (tests).
        public var port = 8080
        /// Connections at once (pages loading, pupils, the teacher); past it they are closed.
        public var maximumConnections = 96
        /// The teacher key: a page opened with `/teacher?key=KEY` is the teacher's from any
        /// machine. (From the classroom computer itself no key is needed.)
        public var teacherKey = randomKey()
        public init() {}
    }

    /// The pages, as served.
    public struct Pages: Sendable {
        public var pupil: [UInt8]
        public var teacher: [UInt8]
        public var qrSVG: [UInt8]
        public var notTeacher: [UInt8]
        public init(pupil: [UInt8], teacher: [UInt8], qrSVG: [UInt8], notTeacher: [UInt8]) {
            self.pupil = pupil
            self.teacher = teacher
            self.qrSVG = qrSVG
            self.notTeacher = notTeacher
        }
    }

    public let settings: Settings
    /// The port listened on (the one given, or the one taken for 0).
    public let port: Int
    private let listener: Int32
    private let classroom: Classroom
    private let link: ClassroomLink
    /// The pages, and the join address the teacher's page shows: set before `start`.
    public var pages = Pages(pupil: [], teacher: [], qrSVG: [], notTeacher: [])
    public var joinURL = ""
    /// The tunes the teacher may start as a follow-along (the demo first): set before `start`.
    public var tunes: [FollowTune] = []
    /// The follow-along under way, or the last one (its tallies stay for the teacher).
    private var follow: FollowAlong?
    private var followRunning = false
    /// The host names a request may give besides IP addresses (this machine's name).
    private let hostNames: [String]
    private let stopRequested = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private var thread: pthread_t?
    private let wake: (read: Int32, write: Int32)

    /// Counters for the teacher (and the session's closing line). Thread: server, read by any.
    public let connectionsRefused = Atomic<Int>(0)
    public let connectionsAccepted = Atomic<Int>(0)
    public let httpRefused = Atomic<Int>(0)
    public let malformedClosed = Atomic<Int>(0)
    public let floodClosed = Atomic<Int>(0)
    public let joinedNow = Atomic<Int>(0)

    /// Binds and listens now (so a taken port is an error at start), serving from `start`.
    public init(settings: Settings, classroom: Classroom, link: ClassroomLink) throws(SystemError) {
        self.settings = settings
        self.classroom = classroom
        self.link = link
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, 255)
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        hostNames = ["localhost", host, host + ".local"].filter { !$0.isEmpty && $0 != ".local" }

        let fd = socket(
            AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError(operation: "socket", code: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(settings.port).bigEndian)
        guard inet_pton(AF_INET, settings.listenAddress, &address.sin_addr) == 1 else {
            Glibc.close(fd)
            throw SystemError(operation: "listen on \(settings.listenAddress) (not an IPv4 address)", code: EINVAL)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw SystemError(operation: "listen on \(settings.listenAddress) port \(settings.port)", code: code)
        }
        var actual = sockaddr_in(), length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: actual.sin_port))
        listener = fd
        do {
            wake = try nonBlockingPipe()
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit {
        Glibc.close(listener)
        Glibc.close(wake.read)
        Glibc.close(wake.write)
    }

    /// Starts serving on a thread of its own (normal priority). Thread: control.
    public func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
            let server = Unmanaged<WebServer>.fromOpaque(context!).takeRetainedValue()
            server.run()
            return nil
        }
        var handle = pthread_t()
        let status = pthread_create(&handle, nil, body, context)
        precondition(status == 0, "cannot create the web server's thread: \(String(cString: strerror(status)))")
        thread = handle
    }

    /// Closes every connection and ends the thread. Thread: control.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
    }

    // MARK: The loop (thread: server)

    private enum Role { case http, pupil, teacher }

    private final class Connection {
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

    private var connections: [Connection] = []
    /// What the control thread must still get when its pipe has room again (not strikes).
    private var waiting: [ClassroomLink.Request] = []
    private var nextConnection = 1
    private var lastLit: [Int] = []
    private var teacherDirty = true
    private var lastTeacherUpdate: UInt64 = 0

    private static let requestTimeout: UInt64 = 10_000_000_000
    private static let silenceTimeout: UInt64 = 30_000_000_000
    private static let pingInterval: UInt64 = 10_000_000_000
    private static let maximumOutput = 256 * 1024
    /// Connections at once from one address (a pupil's phone needs 1; a page reloading 2).
    static let connectionsPerAddress = 8

    private func run() {
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
            followTick(now: now)
            broadcastLit()
            updateTeachers(now: now)
        }
        for c in connections where c.role != .http {
            send(c, webSocketCloseFrame(WebSocketClose.goingAway, reason: "bellkeys stopped"))
        }
        for c in connections { drop(c, now: monotonicNanoseconds()) }
    }

    private func acceptAll(now: UInt64) {
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
            guard connections.count < settings.maximumConnections else {
                // Closed at once, so a flood cannot fill the backlog for the pupils behind it.
                Glibc.close(fd)
                connectionsRefused.add(1, ordering: .relaxed)
                teacherDirty = true
                continue
            }
            let peer = ipv4Text(address.sin_addr)
            var local = sockaddr_in(), localLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) }
            }
            let localText = ipv4Text(local.sin_addr)
            // One machine may not take the room's places: at most `connectionsPerAddress` at
            // once from one address (this machine itself, the teacher's, excepted).
            if peer != localText, connections.count(where: { $0.peer == peer }) >= Self.connectionsPerAddress {
                Glibc.close(fd)
                connectionsRefused.add(1, ordering: .relaxed)
                teacherDirty = true
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            connections.append(Connection(id: nextConnection, fd: fd, peer: peer, local: localText, now: now))
            nextConnection += 1
            connectionsAccepted.add(1, ordering: .relaxed)
        }
    }

    private func receive(_ c: Connection, now: UInt64) {
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

    private func readRequest(_ c: Connection, now: UInt64) {
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

    private func scanHead(_ c: Connection, now: UInt64) {
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
    private func isTeacher(_ c: Connection, _ head: HTTPRequestHead) -> Bool {
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
    private func hostIsOurs(_ head: HTTPRequestHead) -> Bool {
        guard let host = head.header("host")?.lowercased() else { return head.version == "HTTP/1.0" }
        let name = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        var address = in_addr()
        return inet_pton(AF_INET, String(name), &address) == 1 || hostNames.contains(String(name))
    }

    private func route(_ c: Connection, _ head: HTTPRequestHead, now: UInt64) {
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
            let accept: String
            do {
                accept = try webSocketAccept(for: head)
            } catch {
                httpRefused.add(1, ordering: .relaxed)
                respond(
                    c, status: error.status, text: error.reason,
                    headers: error.status == 426 ? [HTTPHeader(name: "Sec-WebSocket-Version", value: "13")] : [])
                return
            }
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

    private func readFrames(_ c: Connection, now: UInt64) {
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

    private func pupilMessage(_ c: Connection, _ payload: [UInt8], now: UInt64) {
        let message: PupilMessage
        do {
            message = try readPupilMessage(payload)
        } catch {
            // A page not joined yet is told why (a name it cannot take, say) before the close.
            if classroom.device(connection: c.id) == nil {
                send(c, text: "{\"type\":\"refused\",\"why\":\"message\",\"text\":\(jsonQuoted(error.description))}")
            }
            malformed(c, code: WebSocketClose.policy, reason: error.description, now: now)
            return
        }
        switch message {
        case .join(let code, let name, let resume):
            switch classroom.join(
                connection: c.id, address: c.peer, code: code, name: name, resume: resume,
                trusted: c.peer == c.local, at: now)
            {
            case .joined(_, let welcome, let replaced):
                send(c, text: welcome)
                send(c, text: Classroom.litJSON(lastLit))
                joinedNow.store(classroom.devices.count, ordering: .relaxed)
                // The device came back on a new connection: the old one goes, the device stays.
                if let replaced, let old = connections.first(where: { $0.id == replaced }) {
                    closeWebSocket(
                        old, code: WebSocketClose.policy, reason: "this device joined again", now: now, leave: false)
                }
            case .refused(let reply):
                send(c, text: reply)
                closeWebSocket(c, code: WebSocketClose.policy, reason: "not joined", now: now)
            }
            teacherDirty = true
        case .ping(let sent):
            // NTP's four times, two of them here: received and replied (the same moment).
            let ms = Double(now) / 1e6
            send(c, text: "{\"type\":\"pong\",\"sent\":\(sent),\"received\":\(ms),\"replied\":\(ms)}")
        default:
            guard let device = classroom.device(connection: c.id) else {
                malformed(c, code: WebSocketClose.policy, reason: "join first", now: now)
                return
            }
            switch classroom.perform(message, connection: c.id, at: now) {
            case .on(let note, let velocity)?:
                hand(.noteOn(device: device.id, note: note, velocity: velocity, arrival: now))
                teacherDirty = true
                if followRunning, let follow, case .strike(_, _, let at) = message {
                    // The tap's time as the page stamped it on our clock, if it is plausible.
                    var tap = now
                    if let at, abs(at * 1e6 - Double(now)) <= 1e9 { tap = UInt64(at * 1e6) }
                    if let (result, ms, _) = follow.judge(device: device.id, note: note, at: tap) {
                        send(
                            c,
                            text:
                                "{\"type\":\"judged\",\"note\":\(note),\"result\":\"\(result.rawValue)\",\"ms\":\(Int(ms.rounded()))}"
                        )
                    }
                }
            case .off(let note)?:
                hand(.noteOff(device: device.id, note: note, arrival: now))
            case nil:
                teacherDirty = true
            }
        }
    }

    private func teacherMessage(_ c: Connection, _ payload: [UInt8], now: UInt64) {
        let message: TeacherMessage
        do {
            message = try readTeacherMessage(payload)
        } catch {
            // The teacher's page is ours: a bad message is a bug to see, not a reason to close.
            send(c, text: "{\"type\":\"error\",\"text\":\(jsonQuoted(error.description))}")
            return
        }
        switch message {
        case .deal(let id, let notes):
            if classroom.deal(notes, to: id) { sendBells() }
        case .dealRound:
            classroom.dealRound()
            sendBells()
        case .free:
            classroom.freePlay()
            sendBells()
        case .remove(let id):
            if let connection = classroom.remove(id: id), let pupil = connections.first(where: { $0.id == connection })
            {
                send(pupil, text: "{\"type\":\"removed\",\"text\":\"The teacher took this device out of the room.\"}")
                hand(.gone(device: id, arrival: now))
                closeWebSocket(
                    pupil, code: WebSocketClose.policy, reason: "removed by the teacher", now: now, leave: false)
            }
        case .volume(let decibels):
            hand(.volume(decibels: decibels))
        case .dampAll:
            hand(.dampAll(arrival: now))
        case .reverb(let preset):
            hand(.reverb(index: TeacherMessage.presets.firstIndex(of: preset) ?? 0))
        case .velocity(let fixed):
            classroom.fixedVelocity = fixed
            sendBells()
        case .follow(let index, let tempo):
            guard index < tunes.count else {
                send(
                    c,
                    text:
                        "{\"type\":\"error\",\"text\":\"tune: there is no tune \(index); give 0 to \(tunes.count - 1)\"}"
                )
                return
            }
            // A lead-in of 3 s: the pages count the first bells in.
            let started = FollowAlong(tune: tunes[index], tempo: tempo, start: now + 3_000_000_000)
            follow = started
            followRunning = true
            let text =
                "{\"type\":\"follow\",\"state\":\"started\",\"name\":\(jsonQuoted(started.tune.name)),\"tempo\":\(tempo)"
                + ",\"startsAt\":\(Double(started.start) / 1e6)}"
            for p in connections where p.role == .pupil { send(p, text: text) }
        case .stopFollow:
            stopFollow()
        }
        teacherDirty = true
    }

    /// Sends the cues coming due to the devices that hold their bells, and counts the misses.
    private func followTick(now: UInt64) {
        guard followRunning, let follow else { return }
        for cue in follow.cuesToSend(
            at: now,
            holders: { note in
                classroom.devices.filter { classroom.held(by: $0).contains(note) }.map(\.id)
            })
        {
            let text = "{\"type\":\"cue\",\"note\":\(cue.note),\"at\":\(Double(cue.at) / 1e6),\"i\":\(cue.index)}"
            for id in cue.expected {
                if let d = classroom.device(id: id), let c = connections.first(where: { $0.id == d.connection }) {
                    send(c, text: text)
                }
            }
        }
        for (id, index) in follow.closeWindows(at: now) {
            teacherDirty = true
            if let d = classroom.device(id: id), let c = connections.first(where: { $0.id == d.connection }) {
                send(
                    c,
                    text: "{\"type\":\"judged\",\"note\":\(follow.cues[index].note),\"result\":\"missed\",\"ms\":null}")
            }
        }
        if follow.isOver { stopFollow() }
    }

    /// Ends the follow-along (its tallies stay for the teacher); the pages clear their cues.
    private func stopFollow() {
        guard followRunning else { return }
        followRunning = false
        teacherDirty = true
        for p in connections where p.role == .pupil { send(p, text: "{\"type\":\"follow\",\"state\":\"stopped\"}") }
    }

    /// Hands `request` to the control thread, after anything still waiting. A strike that finds
    /// the pipe full is dropped and counted; anything else waits (at most 4096, then the oldest
    /// is dropped and counted), so a release is never lost to a busy moment.
    private func hand(_ request: ClassroomLink.Request) {
        if !waiting.isEmpty { handWaiting() }
        if waiting.isEmpty, link.send(request) { return }
        if case .noteOn = request {
            link.droppedToControl.add(1, ordering: .relaxed)
            return
        }
        if waiting.count >= 4_096 {
            waiting.removeFirst()
            link.droppedToControl.add(1, ordering: .relaxed)
        }
        waiting.append(request)
    }

    private func handWaiting() {
        var sent = 0
        while sent < waiting.count, link.send(waiting[sent]) { sent += 1 }
        if sent > 0 { waiting.removeFirst(sent) }
    }

    /// Every pupil's bells, after a deal.
    private func sendBells() {
        for c in connections where c.role == .pupil {
            if let device = classroom.device(connection: c.id) { send(c, text: classroom.bellsJSON(device)) }
        }
    }

    /// Answers each phone whose strike the control thread has queued.
    private func answerQueued(now: UInt64) {
        for (device, note, arrival) in link.takeQueued() {
            guard let d = classroom.device(id: device), let c = connections.first(where: { $0.id == d.connection })
            else { continue }
            let ms = Double(now &- arrival) / 1e6
            send(c, text: "{\"type\":\"rang\",\"note\":\(note),\"queuedAfter\":\(ms)}")
        }
    }

    private func broadcastLit() {
        let lit = link.soundingNotes
        guard lit != lastLit else { return }
        lastLit = lit
        let frame = webSocketFrame(.text, Array(Classroom.litJSON(lit).utf8))
        for c in connections where c.role != .http { send(c, frame) }
    }

    private func updateTeachers(now: UInt64) {
        guard teacherDirty, now &- lastTeacherUpdate > 200_000_000 else { return }
        let teachers = connections.filter { $0.role == .teacher }
        guard !teachers.isEmpty else { return }
        teacherDirty = false
        lastTeacherUpdate = now
        let extra: [(String, String)] = [
            ("joinURL", jsonQuoted(joinURL)),
            ("masterDecibels", String(Double(link.masterCentibels.load(ordering: .relaxed)) / 100)),
            ("reverb", jsonQuoted(TeacherMessage.presets[min(3, max(0, link.roomIndex.load(ordering: .relaxed)))])),
            ("connections", String(connections.count)),
            ("maximumConnections", String(settings.maximumConnections)),
            ("connectionsRefused", String(connectionsRefused.load(ordering: .relaxed))),
            ("httpRefused", String(httpRefused.load(ordering: .relaxed))),
            ("floodClosed", String(floodClosed.load(ordering: .relaxed))),
            ("droppedToControl", String(link.droppedToControl.load(ordering: .relaxed))),
            (
                "tunes",
                "["
                    + tunes.map {
                        "{\"name\":\(jsonQuoted($0.name)),\"cues\":\($0.cues.count),\"leftOut\":\($0.leftOut)}"
                    }.joined(separator: ",") + "]"
            ),
            (
                "follow",
                follow.map { f in
                    "{\"running\":\(followRunning),\"name\":\(jsonQuoted(f.tune.name)),\"tempo\":\(f.tempo),\"cues\":\(f.cues.count)"
                        + ",\"onTimeMs\":\(Int(FollowAlong.onTimeMilliseconds)),\"windowMs\":\(Int(FollowAlong.windowMilliseconds))}"
                } ?? "null"
            ),
        ]
        let follow = follow
        let frame = webSocketFrame(
            .text,
            Array(classroom.teacherJSON(extra: extra, device: { id in follow.map { $0.tallyJSON(device: id) } }).utf8))
        // A teacher's page still behind on the last one gets the next instead (never a pile).
        for c in teachers where c.output.count < 64 * 1024 { send(c, frame) }
    }

    /// Timeouts: a request not finished in 10 s; a WebSocket silent for 30 s (a phone that
    /// went to sleep or left the Wi-Fi: its notes are released). Pings every 10 s keep a
    /// live page heard (browsers answer them by themselves).
    private func sweep(now: UInt64) {
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

    // MARK: Writing and closing

    private func respond(_ c: Connection, status: Int, text: String, headers: [HTTPHeader] = [], omitBody: Bool = false)
    {
        respond(
            c, status: status, type: "text/plain; charset=utf-8", body: Array((text + "\n").utf8), headers: headers,
            omitBody: omitBody)
    }

    private func respond(
        _ c: Connection, status: Int, type: String, body: [UInt8], headers: [HTTPHeader] = [], omitBody: Bool = false
    ) {
        send(c, httpResponse(status: status, contentType: type, body: body, extraHeaders: headers, omitBody: omitBody))
        c.closeAfterWrite = true
        c.input.removeAll()
    }

    private func send(_ c: Connection, text: String) { send(c, webSocketFrame(.text, Array(text.utf8))) }

    /// Sends now what the socket takes, keeping the rest for POLLOUT; a reader that falls
    /// 256 KiB behind is dropped.
    private func send(_ c: Connection, _ bytes: [UInt8]) {
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

    private func flush(_ c: Connection) {
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

    private func malformed(_ c: Connection, code: UInt16, reason: String, now: UInt64) {
        malformedClosed.add(1, ordering: .relaxed)
        classroom.counters.malformed += 1
        closeWebSocket(c, code: code, reason: reason, now: now)
    }

    /// Sends a close frame, then closes once it is written. The device leaves the room now.
    private func closeWebSocket(_ c: Connection, code: UInt16, reason: String, now: UInt64, leave: Bool = true) {
        guard !c.closeAfterWrite else { return }
        send(c, webSocketCloseFrame(code, reason: reason))
        c.closeAfterWrite = true
        c.input.removeAll()
        if leave { left(c, now: now) }
    }

    /// The device of `c` leaves the room: the control thread releases what it holds.
    private func left(_ c: Connection, now: UInt64) {
        if let id = classroom.leave(connection: c.id) {
            hand(.gone(device: id, arrival: now))
            joinedNow.store(classroom.devices.count, ordering: .relaxed)
            teacherDirty = true
        }
        if c.role == .teacher { teacherDirty = true }
    }

    private func drop(_ c: Connection, now: UInt64) {
        guard c.fd >= 0 else { return }
        left(c, now: now)
        Glibc.close(c.fd)
        c.fd = -1
    }
}

/// A random key of 16 hex digits (getrandom).
public func randomKey() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<16).map { _ in String(Int.random(in: 0..<16, using: &generator), radix: 16) }.joined()
}

private func ipv4Text(_ address: in_addr) -> String {
    var a = address
    var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
    inet_ntop(AF_INET, &a, &text, socklen_t(INET_ADDRSTRLEN))
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// This machine's IPv4 addresses by interface, loopback last: where pupils can reach it.
public func localIPv4Addresses() -> [(interface: String, address: String)] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return [] }
    defer { freeifaddrs(list) }
    var out: [(String, String)] = []
    var p = list
    while let entry = p {
        defer { p = entry.pointee.ifa_next }
        guard let addr = entry.pointee.ifa_addr, addr.pointee.sa_family == sa_family_t(AF_INET),
            entry.pointee.ifa_flags & UInt32(IFF_UP) != 0
        else { continue }
        let address = addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4Text($0.pointee.sin_addr) }
        out.append((String(cString: entry.pointee.ifa_name), address))
    }
    return out.sorted { ($0.1.hasPrefix("127.") ? 1 : 0) < ($1.1.hasPrefix("127.") ? 1 : 0) }
}
