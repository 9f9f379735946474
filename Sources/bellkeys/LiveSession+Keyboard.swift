import BellkeysControl
import BellkeysEngine
import BellkeysFormats
import BellkeysIO
import BellkeysTerminal
import Glibc

// The computer keyboard and the screen: the piano picture and its status lines, the keys read
// from the terminal and what each does. Thread: control.
extension LiveSession {
    /// The status area: the piano and its lines with the keyboard UI, else one line.
    func statusLines() -> [String] {
        let voices = player.voiceCount
        let ports = connected.isEmpty ? (sequencer == nil ? "no MIDI input" : "waiting for a keyboard")
                                      : connected.values.sorted { $0.address < $1.address }.map(\.portName).joined(separator: ", ")
        let underruns = output.underrunCount
        guard terminal != nil else {
            return ["♪ voices \(voices) · underruns \(underruns) · ports \(connected.count)"
                    + (connected.isEmpty ? " (waiting for a keyboard)" : ": " + ports)]
        }
        let sounding = (60...72).filter { player.isSounding(note: $0) }
        var lines = PianoView.lines { sounding.contains(60 + $0) }
        lines.append("  sounding: " + (sounding.isEmpty ? "-" : sounding.map { noteName($0) }.joined(separator: " ")))
        lines.append("  volume \(decibelsText(player.masterDecibels)) (↑/↓) · voices \(voices) · pedal \(keyboard.pedalDown ? "down" : "up") (space)"
                     + " · underruns \(underruns)")
        lines.append("  loop: " + loopText() + " · x damps all · Esc quits")
        lines.append("  MIDI: \(ports) · " + (keyboard.reportsReleases ? "key releases on: damped keys stop on release"
                                                                            : "no key releases: bells ring out"))
        return lines
    }

    func loopText() -> String {
        let rate = Double(output.configuration.sampleRate)
        let looper = player.looper
        switch looper.state {
        case .empty:
            return "off (Enter records)"
        case .recording(let start):
            let seconds = Double(max(0, player.frame(arrival: monotonicNanoseconds()) - start)) / rate
            return "recording \(secondsText(seconds, digits: 1)) s, \(looper.noteCount) notes (Enter closes)"
        case .looping(_, let length):
            return "playing \(secondsText(Double(length) / rate, digits: 2)) s, \(looper.noteCount) notes (Backspace clears)"
        }
    }

    /// Reads the computer keyboard, if `ready` (poll saw input or a hang-up), and acts on it.
    /// Returns a reason to quit, if one came.
    func readKeys(_ terminal: Terminal, ready: Bool) -> String? {
        let now = monotonicSeconds()
        var inputs: [TerminalInput] = []
        if ready {
            guard let bytes = terminal.read() else { return "the terminal closed" }
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
                    if let reason = perform(command) { return reason }
                }
            }
        }
        return nil
    }

    /// Carries out one computer-keyboard command. Returns a reason to quit, if it is one.
    func perform(_ command: KeyboardCommand) -> String? {
        let channel = keyboardChannel
        switch command {
        case .noteOn(let note): play(.noteOn(channel: channel, note: UInt8(note), velocity: 100))
        case .noteOff(let note): play(.noteOff(channel: channel, note: UInt8(note), velocity: 64))
        case .pedal(let down): play(.controlChange(channel: channel, controller: MIDIMessage.Controller.sustain, value: down ? 127 : 0))
        case .damp:
            player.dampAll(arrival: monotonicNanoseconds())
        case .volume(let step):
            player.setMasterVolume(decibels: player.masterDecibels + step, range: MapFile.decibelRange)
        case .loop:
            switch player.toggleLoop(arrival: monotonicNanoseconds()) {
            case .started: console.line("loop: recording (Enter closes the loop)")
            case .closed(let length, let notes):
                let looper = player.looper
                console.line("loop: \(notes) notes, repeating every \(secondsText(Double(length) / Double(output.configuration.sampleRate), digits: 3)) s"
                             + " (\(length) frames)" + (looper.overflowed > 0 ? "; \(looper.overflowed) events past the first \(looper.capacity) were not kept" : ""))
            case .discarded: console.line("loop: nothing to repeat (no note, or under a quarter second); not kept")
            case .busy: console.line("loop: a loop is playing; Backspace clears it first")
            }
        case .clearLoop:
            if player.clearLoop(arrival: monotonicNanoseconds()) { console.line("loop: cleared") }
        case .quit(let key):
            return key
        }
        return nil
    }
}
