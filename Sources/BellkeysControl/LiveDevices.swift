// What the live inputs and the poll loop need of the system, as interfaces, with the values
// they carry (SequencerValues.swift, ALSAError.swift): the real devices (of BellkeysMIDI,
// BellkeysAudio and BellkeysSystem) conform in the command (Sources/bellkeys/LiveDevices.swift),
// and the tests (Tests/BellkeysLiveTests) give fakes, as NIOEmbedded gives a channel without a
// socket: the live module links no C library. Thread: control.

/// An ALSA sequencer client, as `SequencerInput` uses it: `Sequencer`, or a fake.
public protocol SequencerClient: AnyObject {
    /// Our own port's address, and our client number.
    var address: SequencerAddress { get }
    var client: Int { get }
    /// The queue that stamps delivery times, or nil (events stamped when read).
    var queue: Int? { get }
    /// alsa-lib's words for a read that failed for good, or nil.
    var readFailureMessage: String? { get }
    /// Times the kernel's input buffer overflowed; how late after delivery events were read.
    var inputOverflows: Int { get }
    var readLag: LagStatistics { get }
    /// Descriptors to poll for input.
    var descriptors: [FileDescriptor] { get }
    /// Every port of every client; the port at an address.
    func ports() -> [SequencerPort]
    func port(at address: SequencerAddress) -> SequencerPort?
    /// Subscribes our port to what `source` sends.
    func connect(from source: SequencerAddress) throws(ALSAError)
    /// The next event and the instant it arrived, or nil when none waits.
    func read() -> (event: SequencerEvent, arrival: MonotonicInstant)?
    /// Measures the queue's clock against the monotonic one again (each wake-up).
    func remeasure()
}

/// The terminal the computer keyboard is read from: `Terminal`, or a fake.
public protocol TerminalDevice: AnyObject {
    /// The descriptor keys arrive on.
    var inputDescriptor: FileDescriptor { get }
    /// The bytes waiting (empty if none), or nil when the terminal went away.
    func read() -> [UInt8]?
    /// Turns on the kitty keyboard protocol's key releases.
    func enableKittyKeyboard()
    /// Gives the terminal back as it was.
    func restore()
    /// The width in columns.
    var columns: Int { get }
}

/// A driver's MIDI port and the graph around it (JACK's `midi_in`), as `JACKMIDIInput` uses it.
public protocol MIDIPortGraph: AnyObject {
    /// Our MIDI input port's full name.
    var midiPortName: String { get }
    /// Physical MIDI capture ports not yet connected to ours.
    func unconnectedPhysicalMIDIPorts() -> [String]
    /// Connects `port` to ours; nil, or why not.
    func connectMIDI(from port: String) -> String?
    /// The ports sending to ours now.
    var midiConnections: [String] { get }
    /// Connections to our port removed so far (counted as they go).
    var midiDisconnectionCount: Int { get }
    /// Whether ports or connections changed since the last call.
    func takeGraphChanged() -> Bool
}

/// Signals delivered through a descriptor: `SignalListener`, or a fake.
public protocol SignalSource: AnyObject {
    /// The descriptor that is readable while a signal waits.
    var signalDescriptor: FileDescriptor { get }
    /// The next pending signal's number, or nil.
    func next() -> Int32?
}
