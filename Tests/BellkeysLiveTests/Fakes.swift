import BellkeysControl
import BellkeysEngine
import BellkeysLive
import BellkeysModel
import EngineTestSupport
import Glibc

// Fakes of the devices the live inputs read (BellkeysControl/LiveDevices.swift), as NIOEmbedded
// fakes a channel: each holds what a test gives it and records what the input asked of it.

/// What a console printed, line by line.
final class Transcript {
    private final class Text { var value = "" }
    private let text = Text()
    let console: Console
    init() { console = Console(live: false) { [text] in text.value += $0 } }
    var lines: [String] { text.value.split(separator: "\n").map(String.init) }
}

/// A clock the test moves: the frame times of a `Rig`. (The inputs hold it through `read`.)
final class TestClock {
    var now: MonotonicInstant = 0
    var read: () -> MonotonicInstant { { self.now } }
}

/// Port capabilities and types as alsa-lib numbers them (SND_SEQ_PORT_CAP_*, _TYPE_*).
enum PortBits {
    static let sends: UInt32 = 0x01 | 0x20 // READ | SUBS_READ
    static let receives: UInt32 = 0x02 | 0x40 // WRITE | SUBS_WRITE
    static let hardware: UInt32 = 0x02 | 0x1_0000 // MIDI_GENERIC | HARDWARE
    static let application: UInt32 = 0x02 | 0x10_0000 // MIDI_GENERIC | APPLICATION
}

final class FakeSequencer: SequencerClient {
    let client = 128
    var address: SequencerAddress { SequencerAddress(client: 128, port: 0) }
    let queue: Int? = 1
    var readFailureMessage: String?
    let inputOverflows = 0
    let readLag = LagStatistics()
    /// The ports the machine has.
    var present: [SequencerPort] = []
    /// Events waiting to be read, with their arrival times.
    var waiting: [(SequencerEvent, MonotonicInstant)] = []
    /// Addresses subscribed to, in order; and the ones that refuse.
    private(set) var subscribed: [SequencerAddress] = []
    var refusing: Set<SequencerAddress> = []

    var descriptors: [FileDescriptor] { [] }
    func ports() -> [SequencerPort] { present }
    func port(at address: SequencerAddress) -> SequencerPort? { present.first { $0.address == address } }
    func connect(from source: SequencerAddress) throws(ALSAError) {
        if refusing.contains(source) {
            throw ALSAError(
                operation: "connect from \(source)", device: "sequencer", code: EPERM,
                message: String(cString: strerror(EPERM)))
        }
        subscribed.append(source)
    }
    func read() -> (event: SequencerEvent, arrival: MonotonicInstant)? { waiting.isEmpty ? nil : waiting.removeFirst() }
    func remeasure() {}
}

final class FakeTerminal: TerminalDevice {
    let inputDescriptor = FileDescriptor(-1)
    let columns = 80
    /// Bytes waiting; nil once the terminal is gone.
    var waiting: [UInt8]? = []
    private(set) var kittyEnabled = false
    func type(_ text: String) { waiting? += Array(text.utf8) }
    func read() -> [UInt8]? {
        defer { if waiting != nil { waiting = [] } }
        return waiting
    }
    func enableKittyKeyboard() { kittyEnabled = true }
    func restore() {}
}

final class FakePortGraph: MIDIPortGraph {
    let midiPortName = "bellkeys:midi_in"
    /// Physical MIDI capture ports the server has, and the ports sending to ours.
    var physical: [String] = []
    var midiConnections: [String] = []
    var midiDisconnectionCount = 0
    var changed = false
    func unconnectedPhysicalMIDIPorts() -> [String] { physical.filter { !midiConnections.contains($0) } }
    func connectMIDI(from port: String) -> String? {
        midiConnections.append(port)
        return nil
    }
    func takeGraphChanged() -> Bool {
        defer { changed = false }
        return changed
    }
    /// Someone (qjackctl) removed `port`'s connection.
    func disconnect(_ port: String) {
        midiConnections.removeAll { $0 == port }
        midiDisconnectionCount += 1
        changed = true
    }
}

/// A pipe, closed when the test ends.
final class Pipe {
    let read: Int32, write: Int32
    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }
        (read, write) = (fds[0], fds[1])
    }
    deinit {
        close(read)
        close(write)
    }
    func poke() { _ = Glibc.write(write, "x", 1) }
    func drain() {
        var byte: UInt8 = 0
        while Glibc.read(read, &byte, 1) == 1 {}
    }
}

/// Signals through a pipe, as a signalfd delivers them.
final class FakeSignals: SignalSource {
    let pipe = Pipe()
    var pending: [Int32] = []
    var signalDescriptor: FileDescriptor { FileDescriptor(pipe.read) }
    func raise(_ signal: Int32) {
        pending.append(signal)
        pipe.poke()
    }
    func next() -> Int32? {
        pipe.drain()
        return pending.isEmpty ? nil : pending.removeFirst()
    }
}
