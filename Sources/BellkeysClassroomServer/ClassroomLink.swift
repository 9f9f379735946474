import BellkeysClassroom
import BellkeysControl
import BellkeysSystem
import Glibc
import Synchronization

/// What crosses between the classroom's server thread and the control thread, which plays
/// what the phones strike through the same `LivePlayer` as a MIDI keyboard. Neither side ever
/// waits for the other:
///
/// - server → control: fixed 24-byte records through a non-blocking pipe the control thread
///   polls with its other inputs. When the pipe is full (the control thread stalled), a strike
///   is dropped and counted (`droppedToControl`: a late strike is worse than none), and what
///   releases (a note-off, a device gone, damp all, the teacher's settings) waits in the
///   server's queue and goes as soon as there is room; a write of one record is atomic (under
///   PIPE_BUF).
/// - control → server: the strikes the control thread has queued (16-byte records through a
///   second pipe, the server's wake-up), and atomics for what sounds and the master volume.
///
/// Thread: as each member says.
public final class ClassroomLink: @unchecked Sendable {
    /// What the server asks of the control thread.
    public enum Request: Equatable, Sendable {
        /// A phone's note: on with `velocity`, or off. `device` is the classroom's id.
        case noteOn(device: Int, note: Int, velocity: Int, arrival: MonotonicInstant)
        case noteOff(device: Int, note: Int, arrival: MonotonicInstant)
        /// The device left: release what it holds, as an unplugged keyboard's.
        case gone(device: Int, arrival: MonotonicInstant)
        case dampAll(arrival: MonotonicInstant)
        case volume(decibels: Double)
        /// A room preset by index in `ReverbPreset.allCases` order (off, room, hall, church).
        case reverb(index: Int)
        /// The phones' channel plays set `index` of the map's sets, from `arrival`.
        case set(index: Int, arrival: MonotonicInstant)
    }

    private let toControl: (read: Int32, write: Int32)
    private let toServer: (read: Int32, write: Int32)
    /// The notes sounding now, 128 bits, published by the control thread.
    private let soundingLow = Atomic<UInt64>(0), soundingHigh = Atomic<UInt64>(0)
    /// Master volume now, in hundredths of a dB, published by the control thread.
    public let masterCentibels = Atomic<Int>(0)
    /// The room preset's index now, published by the control thread.
    public let roomIndex = Atomic<Int>(0)
    /// The set the phones' channel plays now, published by the control thread as the engine
    /// reports it: generation × 256 + the index of the set in that generation's sets (the map's at
    /// start are generation 0; each reload hands over the next, `handOver`). The server deals the
    /// classroom's bells from it, so never from a set list the engine is not playing.
    public let setIndex = Atomic<Int>(0)
    /// A set, with the follow-along's tunes on its bells.
    public typealias Sets = [(set: ClassroomSet, tunes: [FollowTune])]
    private let reloaded = Mutex<(generation: Int, sets: Sets)?>(nil)
    /// Strikes the server dropped because the control thread was not taking them (the pipe
    /// full).
    public let droppedToControl = Atomic<Int>(0)

    public init() throws(SystemError) {
        toControl = try nonBlockingPipe()
        do {
            toServer = try nonBlockingPipe()
        } catch {
            close(toControl.read)
            close(toControl.write)
            throw error
        }
    }

    deinit {
        for fd in [toControl.read, toControl.write, toServer.read, toServer.write] { close(fd) }
    }

    /// The descriptor the control thread polls.
    public var controlDescriptor: Int32 { toControl.read }
    /// The descriptor the server polls.
    public var serverDescriptor: Int32 { toServer.read }

    // MARK: Server side

    /// Hands `request` to the control thread. Never blocks: false if the pipe is full (the
    /// server then keeps what must not be lost, and counts what it drops in
    /// `droppedToControl`). Thread: server.
    @discardableResult
    public func send(_ request: Request) -> Bool {
        var record = [UInt8](repeating: 0, count: 24)
        func put(_ value: UInt64, at offset: Int, bytes: Int) {
            for k in 0..<bytes { record[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
        }
        switch request {
        case .noteOn(let device, let note, let velocity, let arrival):
            record[0] = 1
            record[1] = UInt8(note & 0x7F)
            record[2] = UInt8(velocity & 0x7F)
            put(UInt64(UInt32(truncatingIfNeeded: device)), at: 4, bytes: 4)
            put(arrival.nanoseconds, at: 16, bytes: 8)
        case .noteOff(let device, let note, let arrival):
            record[0] = 2
            record[1] = UInt8(note & 0x7F)
            put(UInt64(UInt32(truncatingIfNeeded: device)), at: 4, bytes: 4)
            put(arrival.nanoseconds, at: 16, bytes: 8)
        case .gone(let device, let arrival):
            record[0] = 3
            put(UInt64(UInt32(truncatingIfNeeded: device)), at: 4, bytes: 4)
            put(arrival.nanoseconds, at: 16, bytes: 8)
        case .dampAll(let arrival):
            record[0] = 4
            put(arrival.nanoseconds, at: 16, bytes: 8)
        case .volume(let decibels):
            record[0] = 5
            put(UInt64(bitPattern: Int64((decibels * 100).rounded())), at: 8, bytes: 8)
        case .reverb(let index):
            record[0] = 6
            put(UInt64(index), at: 8, bytes: 8)
        case .set(let index, let arrival):
            record[0] = 8
            put(UInt64(index), at: 8, bytes: 8)
            put(arrival.nanoseconds, at: 16, bytes: 8)
        }
        return record.withUnsafeBytes { write(toControl.write, $0.baseAddress, 24) } == 24
    }

    /// Wakes the control thread with no request (a record it skips): something it shows
    /// changed (a device joined). Never blocks; dropped if the pipe is full (it is awake then).
    /// Thread: server.
    public func wakeControl() {
        var record = [UInt8](repeating: 0, count: 24)
        record[0] = 7
        _ = record.withUnsafeBytes { write(toControl.write, $0.baseAddress, 24) }
    }

    /// The strikes the control thread has queued since the last call: (device, note, arrival).
    /// Thread: server.
    public func takeQueued(limit: Int = 256) -> [(device: Int, note: Int, arrival: MonotonicInstant)] {
        var out: [(Int, Int, MonotonicInstant)] = []
        var record = [UInt8](repeating: 0, count: 16)
        while out.count < limit {
            let n = record.withUnsafeMutableBytes { read(toServer.read, $0.baseAddress, 16) }
            guard n == 16 else { break }
            var device = 0, arrival: UInt64 = 0
            for k in 0..<4 { device |= Int(record[4 + k]) << (8 * k) }
            for k in 0..<8 { arrival |= UInt64(record[8 + k]) << (8 * UInt64(k)) }
            out.append((device, Int(record[1]), MonotonicInstant(nanoseconds: arrival)))
        }
        return out
    }

    /// The sets of generation `generation`, if they were handed over (and not taken yet).
    /// Thread: server.
    public func takeSets(generation: Int) -> Sets? {
        reloaded.withLock { handed in
            guard let h = handed, h.generation == generation else { return nil }
            handed = nil
            return h.sets
        }
    }

    /// The notes sounding, as the control thread last published them. Thread: server.
    public var soundingNotes: [Int] {
        let words = (soundingLow.load(ordering: .relaxed), soundingHigh.load(ordering: .relaxed))
        return (0..<128).filter { ($0 < 64 ? words.0 >> UInt64($0) : words.1 >> UInt64($0 - 64)) & 1 == 1 }
    }

    // MARK: Control side

    /// The requests the server has sent since the last call (at most `limit`). Thread: control.
    public func takeRequests(limit: Int = 256) -> [Request] {
        var out: [Request] = []
        var record = [UInt8](repeating: 0, count: 24)
        while out.count < limit {
            let n = record.withUnsafeMutableBytes { read(toControl.read, $0.baseAddress, 24) }
            guard n == 24 else { break }
            func get(_ offset: Int, _ bytes: Int) -> UInt64 {
                var v: UInt64 = 0
                for k in 0..<bytes { v |= UInt64(record[offset + k]) << (8 * UInt64(k)) }
                return v
            }
            let device = Int(get(4, 4)), arrival = MonotonicInstant(nanoseconds: get(16, 8)), note = Int(record[1])
            switch record[0] {
            case 1: out.append(.noteOn(device: device, note: note, velocity: Int(record[2]), arrival: arrival))
            case 2: out.append(.noteOff(device: device, note: note, arrival: arrival))
            case 3: out.append(.gone(device: device, arrival: arrival))
            case 4: out.append(.dampAll(arrival: arrival))
            case 5: out.append(.volume(decibels: Double(Int64(bitPattern: get(8, 8))) / 100))
            case 6: out.append(.reverb(index: Int(get(8, 8))))
            case 8: out.append(.set(index: Int(get(8, 8)), arrival: arrival))
            default: break // 7: `wakeControl`, nothing to do but wake
            }
        }
        return out
    }

    /// Hands the server the sets of a reloaded map, as generation `generation` (published in
    /// `setIndex` after this). Thread: control.
    public func handOver(_ sets: Sets, generation: Int) {
        reloaded.withLock { $0 = (generation, sets) }
    }

    /// Tells the server that a phone's strike is queued for the engine (it answers the phone:
    /// the tap-to-engine time). Never blocks; dropped if the server is far behind.
    /// Thread: control.
    public func queued(device: Int, note: Int, arrival: MonotonicInstant) {
        var record = [UInt8](repeating: 0, count: 16)
        record[1] = UInt8(note & 0x7F)
        for k in 0..<4 { record[4 + k] = UInt8(truncatingIfNeeded: device >> (8 * k)) }
        for k in 0..<8 { record[8 + k] = UInt8(truncatingIfNeeded: arrival.nanoseconds >> (8 * UInt64(k))) }
        _ = record.withUnsafeBytes { write(toServer.write, $0.baseAddress, 16) }
    }

    /// Publishes the notes sounding now; returns whether any is. Thread: control.
    @discardableResult
    public func publishSounding(_ isSounding: (Int) -> Bool, notes: [Int]) -> Bool {
        var words: (UInt64, UInt64) = (0, 0)
        for note in notes where note >= 0 && note < 128 && isSounding(note) {
            if note < 64 { words.0 |= 1 << UInt64(note) } else { words.1 |= 1 << UInt64(note - 64) }
        }
        soundingLow.store(words.0, ordering: .relaxed)
        soundingHigh.store(words.1, ordering: .relaxed)
        return words != (0, 0)
    }
}

/// A pipe whose ends never block and are closed on exec.
func nonBlockingPipe() throws(SystemError) -> (read: Int32, write: Int32) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw SystemError(operation: "pipe", code: errno) }
    for fd in fds {
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    return (fds[0], fds[1])
}
