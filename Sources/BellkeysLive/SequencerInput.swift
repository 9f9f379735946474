import BellkeysControl
import BellkeysEngine
import BellkeysModel
import Glibc

/// MIDI keyboards through the ALSA sequencer, as a live input: which ports to connect (every
/// keyboard, now and when plugged in, or those `--connect` names), the `--channel` and `--skip-drums` filter,
/// `--verbose`, and releasing what an unplugged keyboard held. Thread: control.
public final class SequencerInput: LiveInput {
    public let sequencer: any SequencerClient
    let console: Console
    /// `--connect` patterns; empty: connect every keyboard.
    public let patterns: [String]
    /// `--channel` and `--skip-drums`.
    public let filter: ChannelFilter
    let verbose: Bool
    /// The monotonic clock in ns (a test's own in tests): when a keyboard's notes are released.
    let clock: () -> MonotonicInstant
    /// Ports sending to us, with what they were called when they connected.
    public private(set) var connected: [SequencerAddress: SequencerPort] = [:]
    /// Messages received from keyboards, played or not (before the --channel filter), for the
    /// closing report.
    public private(set) var eventsReceived = 0

    public init(
        sequencer: any SequencerClient, console: Console, patterns: [String], filter: ChannelFilter, verbose: Bool,
        clock: @escaping () -> MonotonicInstant
    ) {
        self.sequencer = sequencer
        self.clock = clock
        self.console = console
        self.patterns = patterns
        self.filter = filter
        self.verbose = verbose
    }

    /// The start-up report's line.
    public var startupLine: String? {
        var line =
            "  MIDI input: port \(sequencer.address) \"bellkeys\", "
            + (patterns.isEmpty
                ? "connecting every keyboard, now and when plugged in"
                : "connecting " + patterns.map { "'\($0)'" }.joined(separator: ", "))
        if let channel = filter.channel { line += ", channel \(channel + 1) only" }
        if filter.skipsDrums { line += ", channel 10 (drums) left out" }
        line +=
            sequencer.queue.map { "; events stamped on delivery (queue \($0))" }
            ?? "; events stamped when read (no sequencer queue free)"
        return line
    }

    /// Connects the keyboards there now, and says which asked-for ones are not.
    public func connectPresent() {
        for port in sequencer.ports() where wanted(port) { connect(port) }
        for pattern in patterns where !connected.values.contains(where: { $0.matches(pattern) }) {
            console.line("  waiting for '\(pattern)' to appear")
        }
    }

    public var descriptors: [FileDescriptor] { sequencer.descriptors }
    public var pollTimeoutMilliseconds: Int32? { nil }

    public func drain(ready: Bool, player: LivePlayer) -> InputOutcome {
        // Everything waiting is read first, so that slow handling of one event (a new port's
        // name lookup) never delays the stamps of the notes behind it. The stamps are the
        // kernel's delivery times when the sequencer gives them (see Sequencer.read).
        sequencer.remeasure()
        var arrived: [(SequencerEvent, MonotonicInstant)] = []
        while let received = sequencer.read() { arrived.append(received) }
        for (event, arrival) in arrived { handle(event, arrival: arrival, player: player) }
        if let failure = sequencer.readFailureMessage {
            return .failed(
                reason: "the MIDI input failed", message: "the MIDI input (ALSA sequencer) failed: \(failure)")
        }
        return .carryOn
    }

    /// One sequencer event: a message to play (unless --channel filters it out), or a port
    /// that appeared, went away, or was connected or disconnected by someone.
    private func handle(_ event: SequencerEvent, arrival: MonotonicInstant, player: LivePlayer) {
        switch event {
        case .midi(let source, let message):
            eventsReceived += 1
            if verbose { console.line(describeEvent(source: "\(source)", message: message)) }
            if !filter.accepts(status: message.bytes.status) { return }
            player.play(message, from: source.key, arrival: arrival, transposable: true)
        case .portStarted(let address):
            if let port = sequencer.port(at: address), wanted(port) { connect(port) }
        case .portExited(let address):
            noteDisconnected(address, why: "port gone", player: player)
        case .clientExited(let client):
            for address in connected.keys where address.client == client {
                noteDisconnected(address, why: "client gone", player: player)
            }
        case .subscribed(let sender, let destination):
            // Our own subscription to System Announce (client 0) is not a keyboard.
            guard destination == sequencer.address, sender.client != 0, connected[sender] == nil else { return }
            noteConnected(
                sequencer.port(at: sender)
                    ?? SequencerPort(address: sender, clientName: "?", portName: "\(sender)"))
        case .unsubscribed(let sender, let destination):
            if destination == sequencer.address { noteDisconnected(sender, why: "connection removed", player: player) }
        case .other(let source, let type):
            if source.client != 0 { eventsReceived += 1 }
            if verbose, source.client != 0 {
                console.line(String(pad("\(source)", 7)) + "sequencer event type \(type)")
            }
        }
    }

    /// Whether bellkeys should connect to `port` by itself.
    private func wanted(_ port: SequencerPort) -> Bool {
        guard port.address.client != sequencer.client, port.sendsMIDI else { return false }
        if patterns.isEmpty { return port.isAutoConnectable }
        return patterns.contains { port.matches($0) }
    }

    private func connect(_ port: SequencerPort) {
        guard connected[port.address] == nil else { return }
        do {
            try sequencer.connect(from: port.address)
            noteConnected(port)
        } catch {
            console.line("cannot connect \(port.description): \(error.message)")
        }
    }

    private func noteConnected(_ port: SequencerPort) {
        guard connected[port.address] == nil else { return }
        connected[port.address] = port
        console.line("connected \(port.description)")
    }

    private func noteDisconnected(_ address: SequencerAddress, why: String, player: LivePlayer) {
        guard let port = connected.removeValue(forKey: address) else { return }
        let notes = player.release(source: address.key, arrival: clock())
        console.line(
            "disconnected \(port.description): \(why)"
                + (notes > 0 ? "; released \(notes) held note\(notes == 1 ? "" : "s")" : ""))
    }

    /// The connected ports' names, for the status line, in address order.
    public var connectedNames: [String] { connected.values.sorted { $0.address < $1.address }.map(\.portName) }
}
