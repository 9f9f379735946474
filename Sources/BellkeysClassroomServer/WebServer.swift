import BellkeysClassroom
import BellkeysSystem
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
/// counted. Connections are capped (`maximumConnections`, `connectionsPerAddress` from one
/// address): when every place is taken, an unfinished request or a pupil's socket that has not
/// joined gives way to a new connection, the oldest first (`ConnectionSlots`), and past that a
/// new one is closed at once. A connection that has not finished its request in 10 s, a
/// WebSocket silent for 30 s, a pupil's that has not joined in 30 s, or one whose unread output
/// passes 256 KiB is closed; each connection may send at most 50 messages a second (burst 100)
/// of any kind, and each device 10 strikes a second (the classroom's limit).
///
/// Its parts: the socket loop (`WebServerLoop.swift`), a connection's state and the writing and
/// closing of it (`WebServerConnection.swift`), requests and routes (`WebServerRoutes.swift`),
/// what pupils and the teacher say (`WebServerMessages.swift`), and what the server sends on
/// its own or hands to the control thread (`WebServerUpdates.swift`).
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
    let listener: Int32
    let classroom: Classroom
    let link: ClassroomLink
    /// The pages, and the join address the teacher's page shows: set before `start`.
    public var pages = Pages(pupil: [], teacher: [], qrSVG: [], notTeacher: [])
    public var joinURL = ""
    /// The sets the phones may play, in the map's order, each with the tunes the teacher may
    /// start as a follow-along on its bells (the demo first): set before `start`. A map of one
    /// instrument is one set, named nil.
    public var sets: ClassroomLink.Sets = []
    /// The set the classroom's bells are dealt from now (an index of `sets`): the one the
    /// control thread last published (`followSet`). Set before `start` to the starting set.
    public var classroomSet = 0
    /// The generation of `sets` (0: the map's at start; a reload hands over the next).
    var setsGeneration = 0
    /// The tunes of the classroom's set.
    var tunes: [FollowTune] { sets.indices.contains(classroomSet) ? sets[classroomSet].tunes : [] }
    /// The follow-along under way, or the last one (its tallies stay for the teacher).
    var follow: FollowAlong?
    var followRunning = false
    /// The host names a request may give besides IP addresses (this machine's name).
    let hostNames: [String]
    let stopRequested = Atomic<Bool>(false)
    let finished = Atomic<Bool>(false)
    var thread: pthread_t?
    let wake: (read: Int32, write: Int32)

    /// Counters for the teacher (and the session's closing line). Thread: server, read by any.
    public let connectionsRefused = Atomic<Int>(0)
    /// Connections closed to make room for a new one (unfinished requests, sockets not joined).
    public let connectionsGaveWay = Atomic<Int>(0)
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
        slots = ConnectionSlots(maximum: settings.maximumConnections, perAddress: Self.connectionsPerAddress)
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
        let status = startThread(&handle, context: context, body)
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

    // MARK: The server thread's state (thread: server)

    var connections: [Connection] = []
    /// What the control thread must still get when its pipe has room again (not strikes).
    var waiting: [ClassroomLink.Request] = []
    var nextConnection = 1
    var lastLit: [Int] = []
    var teacherDirty = true
    var lastTeacherUpdate: UInt64 = 0

    static let requestTimeout: UInt64 = 10_000_000_000
    static let silenceTimeout: UInt64 = 30_000_000_000
    static let pingInterval: UInt64 = 10_000_000_000
    static let maximumOutput = 256 * 1024
    /// Connections at once from one address (a pupil's phone needs 1; a page reloading 2).
    static let connectionsPerAddress = 8
    /// Who gets a place (`maximumConnections`, `connectionsPerAddress`).
    let slots: ConnectionSlots
}
