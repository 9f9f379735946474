import BellkeysControl
import BellkeysEngine

/// The JACK MIDI port `midi_in` as a live input. Its events are played on JACK's process
/// thread at their frame offsets (`JACKOutput`); here the control thread keeps what they hold
/// and the loop records them (`LivePlayer.notePlayedNow`), connects the physical MIDI ports
/// when it is the keyboards' way in, and reports connections. JACK merges every sender into
/// the one port, so when a sender disconnects, every note held through `midi_in` is released.
/// Thread: control.
public final class JACKMIDIInput: LiveInput {
    let output: any MIDIPortGraph
    let console: Console
    /// Whether physical MIDI ports (keyboards the server sees) are connected as they appear:
    /// only when no ALSA sequencer connects them, so that no keyboard is connected twice.
    let connectsPhysicalPorts: Bool
    let verbose: Bool
    /// Ports sending to `midi_in`, as last seen.
    public private(set) var connected: [String] = []
    public var connectedNames: [String] { connected }
    /// Physical ports connected once already: a user who disconnects one (qjackctl) is not
    /// overruled.
    private var autoConnected: Set<String> = []
    /// `JACKOutput.midiDisconnections` when last looked at.
    private var disconnections = 0
    /// Messages played from `midi_in` (after the --channel filter).
    public private(set) var eventsReceived = 0
    /// The monotonic clock in ns (a test's own in tests): when a sender's notes are released.
    let clock: () -> MonotonicInstant

    public init(
        output: any MIDIPortGraph, console: Console, connectsPhysicalPorts: Bool, verbose: Bool,
        clock: @escaping () -> MonotonicInstant
    ) {
        self.output = output
        self.clock = clock
        self.console = console
        self.connectsPhysicalPorts = connectsPhysicalPorts
        self.verbose = verbose
    }

    public var startupLine: String? {
        "  JACK MIDI input: \(output.midiPortName), events played at their frame in the cycle"
            + (connectsPhysicalPorts
                ? "; connecting every physical MIDI port, now and when it appears"
                : "; keyboards come through the ALSA sequencer (connect JACK senders here yourself)")
    }

    /// Connects what should be and reports what is connected. Call after the output started.
    public func connectPresent() {
        look(player: nil)
    }

    public var descriptors: [FileDescriptor] { [] }
    /// Nothing to wait on: JACK's process thread plays the events, and makes no system call to
    /// wake this one. While a sender is connected, the loop looks at least every
    /// `LiveLoop.busyMilliseconds` (the lit keys, the held notes); with none, nothing can
    /// arrive, and a new connection wakes the loop (through the output's wake-up).
    public var pollTimeoutMilliseconds: Int32? { connected.isEmpty ? nil : LiveLoop.busyMilliseconds }

    public func drain(ready: Bool, player: LivePlayer) -> InputOutcome {
        player.notePlayedNow(source: LivePlayer.renderThreadSource) { event in
            eventsReceived += 1
            if verbose, let message = MIDIMessage(event) {
                console.line(describeEvent(source: "jack", message: message))
            }
        }
        if output.takeGraphChanged() { look(player: player) }
        return .carryOn
    }

    /// Connects new physical ports (if it should) and reports connections made and gone.
    private func look(player: LivePlayer?) {
        if connectsPhysicalPorts {
            for port in output.unconnectedPhysicalMIDIPorts() where !autoConnected.contains(port) {
                autoConnected.insert(port)
                if let problem = output.connectMIDI(from: port) {
                    console.line("cannot connect JACK MIDI \(port): \(problem)")
                }
            }
        }
        let now = output.midiConnections
        let gone = connected.filter { !now.contains($0) }
        for port in now where !connected.contains(port) { console.line("connected JACK MIDI \(port)") }
        // Counted by JACK's callback as they go: a sender that came and went between two looks
        // still lets go of what it held.
        let removed = output.midiDisconnectionCount
        if removed != disconnections {
            disconnections = removed
            let notes = player?.release(source: LivePlayer.renderThreadSource, arrival: clock()) ?? 0
            let names = gone.isEmpty ? ["a sender"] : gone
            for port in names {
                console.line(
                    "disconnected JACK MIDI \(port)"
                        + (notes > 0 ? "; released \(notes) held note\(notes == 1 ? "" : "s")" : ""))
            }
        }
        connected = now
    }
}
