import BellkeysControl
import BellkeysModel
import BellkeysTerminal

/// The computer keyboard as a live input: keys read from the terminal, decoded (legacy or
/// kitty protocol), and carried out through the player: notes, the pedal, damp all, the volume
/// keys, the loop, the room and the set (asked of the session through the player), the octave
/// (which the picture shows); or a reason to quit. Thread: control.
public final class KeyboardInput: LiveInput {
    public let terminal: any TerminalDevice
    let console: Console
    /// The MIDI channel it plays on (--channel, else 1), 0-based.
    public let channel: UInt8
    /// The monotonic clock in ns (a test's own in tests): key times and arrivals.
    let clock: () -> MonotonicInstant
    private var parser = TerminalInputParser()
    public private(set) var keyboard = TerminalKeyboard()
    /// When the kitty keyboard query was sent; the answer (or its absence) decides the mode.
    private var keyboardQuery: Double?
    /// Since when a partial escape sequence has waited for the rest.
    private var pendingSince: Double?

    /// Takes over `terminal`, which has just asked for the kitty keyboard protocol; the note keys
    /// play from `lowestNote` (a C) up.
    public init(
        terminal: any TerminalDevice, console: Console, channel: UInt8, lowestNote: Int = 60,
        clock: @escaping () -> MonotonicInstant
    ) {
        self.terminal = terminal
        self.console = console
        self.channel = channel
        self.clock = clock
        keyboard = TerminalKeyboard(lowestNote: lowestNote)
        keyboardQuery = clock().seconds
    }

    public var descriptors: [FileDescriptor] { [terminal.inputDescriptor] }
    // A lone ESC waits 30 ms for the rest of a sequence.
    public var pollTimeoutMilliseconds: Int32? { parser.hasPending ? 30 : nil }

    public func drain(ready: Bool, player: LivePlayer) -> InputOutcome {
        let now = clock().seconds
        var inputs: [TerminalInput] = []
        if ready {
            guard let bytes = terminal.read() else { return .quit(reason: "the terminal closed") }
            inputs = parser.feed(bytes)
            if parser.hasPending, pendingSince == nil { pendingSince = now }
        } else if let since = pendingSince, now - since >= 0.025 {
            // Nothing followed an ESC for 25 ms: it was the Esc key.
            inputs = parser.flush()
        }
        if !parser.hasPending { pendingSince = nil }
        for input in inputs {
            switch input {
            case .kittyKeyboardFlags:
                if keyboardQuery != nil {
                    terminal.enableKittyKeyboard()
                    keyboard.reportsReleases = true
                    keyboardQuery = nil
                }
            case .deviceAttributes:
                keyboardQuery = nil
            case .key(let key, let action):
                for command in keyboard.handle(key, action, seconds: now) {
                    if let reason = perform(command, player: player) { return .quit(reason: reason) }
                }
            }
        }
        return .carryOn
    }

    /// Carries out one computer-keyboard command. Returns a reason to quit, if it is one.
    private func perform(_ command: KeyboardCommand, player: LivePlayer) -> String? {
        let now = clock()
        switch command {
        case .noteOn(let note):
            player.play(.noteOn(channel: channel, note: UInt8(note), velocity: 100), from: nil, arrival: now)
        case .noteOff(let note):
            player.play(.noteOff(channel: channel, note: UInt8(note), velocity: 64), from: nil, arrival: now)
        case .pedal(let down):
            player.play(
                .controlChange(channel: channel, controller: MIDIMessage.Controller.sustain, value: down ? 127 : 0),
                from: nil, arrival: now)
        case .damp:
            player.dampAll(arrival: now)
        case .volume(let step):
            player.setMasterVolume(decibels: player.masterDecibels + step, range: Instrument.volumeRange)
        case .loop:
            switch player.toggleLoop(arrival: now) {
            case .started: console.line("loop: recording (Enter closes the loop)")
            case .closed(let length, let notes):
                let looper = player.looper
                console.line(
                    "loop: \(notes) notes, repeating every \(secondsText(Double(length) / Double(player.sampleRate), digits: 3)) s"
                        + " (\(length) frames)"
                        + (looper.overflowed > 0
                            ? "; \(looper.overflowed) events past the first \(looper.capacity) were not kept" : ""))
            case .discarded: console.line("loop: nothing to repeat (no note, or under a quarter second); not kept")
            case .busy: console.line("loop: a loop is playing; Backspace clears it first")
            }
        case .clearLoop:
            if player.clearLoop(arrival: now) { console.line("loop: cleared") }
        case .nextRoom:
            player.ask(.nextRoom)
        case .nextSet:
            player.ask(.nextSet(channel: channel, arrival: now))
        case .octave:
            break // the status line shows it
        case .quit(let key):
            return key
        }
        return nil
    }
}
