import BellkeysControl
import BellkeysEngine
import BellkeysFormats
import BellkeysIO
import BellkeysTerminal
import Glibc

// The status area under the start-up report: the piano picture and its lines with the keyboard
// UI, else one line. Thread: control.
extension LiveSession {
    /// The status area: the piano and its lines with the keyboard UI, else one line.
    func statusLines() -> [String] {
        let voices = player.voiceCount
        let names = midi?.portNames ?? []
        let ports = names.isEmpty ? (midi == nil ? "no MIDI input" : "waiting for a keyboard") : names.joined(separator: ", ")
        let underruns = output.underrunCount
        guard let keyboard = keys?.keyboard else {
            return ["♪ voices \(voices) · underruns \(underruns) · ports \(names.count)"
                    + (names.isEmpty ? " (waiting for a keyboard)" : ": " + ports)]
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
}
