// The sequencer's plain values: addresses, ports as `aconnect -l` shows them, events and their
// decoding from alsa-lib's fields (a pure function), and read-lag statistics. Values of the
// control module, so that the live loop's interface to the sequencer (`SequencerClient`) and its
// fakes need no alsa-lib; BellkeysMIDI makes them from alsa-lib's records.

/// A sequencer address: client and port numbers, written `client:port`.
public struct SequencerAddress: Hashable, Sendable, CustomStringConvertible, Comparable {
    public var client: Int
    public var port: Int
    public init(client: Int, port: Int) {
        self.client = client
        self.port = port
    }
    public var description: String { "\(client):\(port)" }
    /// One integer for the address (for `HeldNotes`).
    public var key: Int { client << 8 | port }
    public static func < (a: Self, b: Self) -> Bool { (a.client, a.port) < (b.client, b.port) }
}

/// A sequencer port as `aconnect -l` shows it.
public struct SequencerPort: Sendable {
    public var address: SequencerAddress
    public var clientName: String
    public var portName: String
    public var capability: UInt32
    public var type: UInt32

    public init(
        address: SequencerAddress, clientName: String, portName: String, capability: UInt32 = 0,
        type: UInt32 = 0
    ) {
        self.address = address
        self.clientName = clientName
        self.portName = portName
        self.capability = capability
        self.type = type
    }

    /// "24:0 USB Keyboard MIDI 1 (USB Keyboard)"
    public var description: String { "\(address) \(portName) (\(clientName))" }

    /// Whether other clients may subscribe to what this port sends.
    public var sendsMIDI: Bool {
        let read = SequencerPort.capabilityRead | SequencerPort.capabilitySubscribeRead
        return capability & read == read && capability & SequencerPort.capabilityNoExport == 0
    }

    /// Whether bellkeys connects to it by itself: a port that sends MIDI from a hardware or
    /// application client, other than System and Midi Through.
    public var isAutoConnectable: Bool {
        guard sendsMIDI, address.client != SequencerPort.systemClient else { return false }
        if clientName == "Midi Through" || clientName.hasPrefix("Midi Through") { return false }
        let midi =
            SequencerPort.typeMIDIGeneric | SequencerPort.typeApplication | SequencerPort.typeHardware
            | SequencerPort.typeSoftware | SequencerPort.typePort
        return type & midi != 0
    }

    /// Whether `pattern` names this port: `client:port`, a client number (`24` = all its
    /// ports), the client's name, or a case-insensitive part of "client name port name".
    public func matches(_ pattern: String) -> Bool {
        let parts = pattern.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, let c = Int(parts[0]), let p = Int(parts[1]) {
            return address == SequencerAddress(client: c, port: p)
        }
        if parts.count == 2, let p = Int(parts[1]), clientName == parts[0] { return address.port == p }
        if let c = Int(pattern) { return address.client == c }
        if clientName == pattern || portName == pattern { return true }
        return "\(clientName) \(portName)".lowercased().contains(pattern.lowercased())
    }
}

/// A MIDI or system event read from the sequencer.
public enum SequencerEvent: Sendable, Equatable {
    /// A note-on, note-off or control change.
    case midi(source: SequencerAddress, message: MIDIMessage)
    case portStarted(SequencerAddress)
    case portExited(SequencerAddress)
    case clientExited(client: Int)
    /// A connection from `sender` to `destination` was made or removed (by anyone).
    case subscribed(sender: SequencerAddress, destination: SequencerAddress)
    case unsubscribed(sender: SequencerAddress, destination: SequencerAddress)
    /// Anything else (clock, sysex, ...): its sequencer event type.
    case other(source: SequencerAddress, type: Int)
}

/// The fields of a sequencer event that bellkeys reads, as plain values: what alsa-lib's
/// `snd_seq_event_t` holds (its data is a union: which part means something depends on `type`).
public struct SequencerEventFields: Sendable {
    public var type: Int32
    public var source: SequencerAddress
    /// `data.note`: channel, note, velocity (note-on and note-off).
    public var note: (channel: UInt8, note: UInt8, velocity: UInt8)
    /// `data.control`: channel, parameter (the controller), value (controllers).
    public var control: (channel: UInt8, parameter: UInt32, value: Int32)
    /// `data.addr` (a port started or exited, a client exited).
    public var address: SequencerAddress
    /// `data.connect` (a subscription made or removed).
    public var connection: (sender: SequencerAddress, destination: SequencerAddress)

    public init(
        type: Int32, source: SequencerAddress = SequencerAddress(client: 0, port: 0),
        note: (channel: UInt8, note: UInt8, velocity: UInt8) = (0, 0, 0),
        control: (channel: UInt8, parameter: UInt32, value: Int32) = (0, 0, 0),
        address: SequencerAddress = SequencerAddress(client: 0, port: 0),
        connection: (sender: SequencerAddress, destination: SequencerAddress) = (
            SequencerAddress(client: 0, port: 0), SequencerAddress(client: 0, port: 0)
        )
    ) {
        self.type = type
        self.source = source
        self.note = note
        self.control = control
        self.address = address
        self.connection = connection
    }
}

/// alsa-lib's sequencer event types that bellkeys tells apart (`SND_SEQ_EVENT_*` of
/// alsa/seq_event.h, as numbers; the MIDI module's tests check each against alsa-lib).
public enum SequencerEventType {
    public static let noteOn: Int32 = 6
    public static let noteOff: Int32 = 7
    public static let keyPressure: Int32 = 8
    public static let controller: Int32 = 10
    public static let programChange: Int32 = 11
    public static let channelPressure: Int32 = 12
    public static let pitchBend: Int32 = 13
    public static let clientExit: Int32 = 61
    public static let portStart: Int32 = 63
    public static let portExit: Int32 = 64
    public static let portSubscribed: Int32 = 66
    public static let portUnsubscribed: Int32 = 67
}

extension SequencerPort {
    // alsa-lib's port capabilities, port types and the system client (alsa/seq.h), as numbers;
    // the MIDI module's tests check each against alsa-lib.
    public static let capabilityRead: UInt32 = 1 << 0
    public static let capabilitySubscribeRead: UInt32 = 1 << 5
    public static let capabilityNoExport: UInt32 = 1 << 7
    public static let typeMIDIGeneric: UInt32 = 1 << 1
    public static let typeHardware: UInt32 = 1 << 16
    public static let typeSoftware: UInt32 = 1 << 17
    public static let typePort: UInt32 = 1 << 19
    public static let typeApplication: UInt32 = 1 << 20
    public static let systemClient = 0
}

extension SequencerEvent {
    /// Decodes an event from its fields: a pure function, unit-tested without a sequencer.
    /// Channels, notes, velocities and controllers are masked to their 4 and 7 bits as a MIDI
    /// byte would carry them; a controller's value is clamped to 0...127.
    public init(decoding event: SequencerEventFields) {
        let source = event.source
        switch event.type {
        case SequencerEventType.noteOn:
            let note = event.note
            self = .midi(
                source: source,
                message: .noteOn(channel: note.channel & 0x0F, note: note.note & 0x7F, velocity: note.velocity & 0x7F))
        case SequencerEventType.noteOff:
            let note = event.note
            self = .midi(
                source: source,
                message: .noteOff(channel: note.channel & 0x0F, note: note.note & 0x7F, velocity: note.velocity & 0x7F))
        case SequencerEventType.controller:
            let control = event.control
            self = .midi(
                source: source,
                message: .controlChange(
                    channel: control.channel & 0x0F,
                    controller: UInt8(truncatingIfNeeded: control.parameter & 0x7F),
                    value: UInt8(truncatingIfNeeded: max(0, min(127, control.value)))))
        case SequencerEventType.pitchBend:
            // alsa-lib gives the bend as -8192...8191.
            let control = event.control
            self = .midi(
                source: source,
                message: .pitchBend(
                    channel: control.channel & 0x0F, value: UInt16(max(0, min(16_383, Int(control.value) + 8192)))))
        case SequencerEventType.programChange:
            // alsa-lib gives the program in `data.control.value`.
            let control = event.control
            self = .midi(
                source: source,
                message: .programChange(
                    channel: control.channel & 0x0F, program: UInt8(truncatingIfNeeded: max(0, min(127, control.value)))
                ))
        case SequencerEventType.keyPressure:
            // alsa-lib gives a key's pressure as the note's velocity.
            let note = event.note
            self = .midi(
                source: source,
                message: .keyPressure(channel: note.channel & 0x0F, note: note.note & 0x7F, value: note.velocity & 0x7F)
            )
        case SequencerEventType.channelPressure:
            let control = event.control
            self = .midi(
                source: source,
                message: .channelPressure(
                    channel: control.channel & 0x0F, value: UInt8(truncatingIfNeeded: max(0, min(127, control.value)))))
        case SequencerEventType.portStart:
            self = .portStarted(event.address)
        case SequencerEventType.portExit:
            self = .portExited(event.address)
        case SequencerEventType.clientExit:
            self = .clientExited(client: event.address.client)
        case SequencerEventType.portSubscribed:
            self = .subscribed(sender: event.connection.sender, destination: event.connection.destination)
        case SequencerEventType.portUnsubscribed:
            self = .unsubscribed(sender: event.connection.sender, destination: event.connection.destination)
        default:
            self = .other(source: source, type: Int(event.type))
        }
    }
}

/// The mean and the largest of a series of delays.
public struct LagStatistics: Sendable {
    public private(set) var count = 0
    public private(set) var totalNanoseconds: UInt64 = 0
    public private(set) var maximumNanoseconds: UInt64 = 0

    public init() {}

    public mutating func add(_ nanoseconds: UInt64) {
        count += 1
        totalNanoseconds &+= nanoseconds
        maximumNanoseconds = max(maximumNanoseconds, nanoseconds)
    }

    /// The mean and the largest, in milliseconds; nil with nothing measured.
    public var milliseconds: (mean: Double, maximum: Double)? {
        guard count > 0 else { return nil }
        return (Double(totalNanoseconds) / Double(count) / 1e6, Double(maximumNanoseconds) / 1e6)
    }
}
