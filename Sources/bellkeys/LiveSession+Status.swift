import BellkeysControl
import BellkeysEngine
import BellkeysFormats
import BellkeysSystem
import BellkeysTerminal
import Glibc

// The status area under the start-up report: the piano picture and its lines with the keyboard
// UI, else one line. Thread: control.
extension LiveSession {
    /// The status area: the piano and its lines with the keyboard UI, else one line.
    func statusLines() -> [String] {
        let voices = player.voiceCount
        let names = (midi?.connectedNames ?? []) + (driverMIDI?.connectedNames ?? [])
        let ports =
            names.isEmpty
            ? (midi == nil && driverMIDI == nil ? "no MIDI input" : "waiting for a keyboard")
            : names.joined(separator: ", ")
        let underruns = output.statusText()
        let transpose = player.engine.configuration.transpose
        let transposition = transpose == 0 ? "not transposed" : "transposed \(transpose > 0 ? "+" : "")\(transpose)"
        guard let keyboard = keys?.keyboard else {
            return [
                "♪ voices \(voices) · \(underruns) · ports \(names.count)"
                    + (names.isEmpty ? (web == nil ? " (waiting for a keyboard)" : "") : ": " + ports)
                    + (transpose == 0 ? "" : " (\(transposition))")
                    + (web.map { " · " + $0.statusText } ?? "")
            ]
        }
        let sounding = (0...127).filter { player.isSounding(note: $0) }
        var lines = picture.lines(keyboardLowest: keyboard.lowestNote, columns: console.columns, sounding: sounding)
        lines.append(
            "  volume \(decibelsText(player.masterDecibels)) (↑/↓) · voices \(voices) · pedal \(keyboard.pedalDown ? "down" : "up") (space)"
                + " · \(underruns)")
        var controls = "  loop: " + loopText() + " · x damps all · r room: \(shownRoom.rawValue)"
        if !loaded.sets.isEmpty {
            let set = player.engine.currentSet(channel: Int(keys?.channel ?? 0))
            controls += " · p set: \(loaded.sets[min(set, loaded.sets.count - 1)].name)"
        }
        lines.append(controls + " · Esc quits")
        if let web { lines.append("  " + web.statusText) }
        lines.append(
            "  MIDI: \(ports) · \(transposition) · "
                + (keyboard.reportsReleases
                    ? "key releases on: damped keys stop on release"
                    : "no key releases: bells ring out"))
        return lines
    }

    /// Once for each program (and bank) that a program change asked for and no set has: how
    /// many such changes came, that program, and the programs the map has.
    func tellOfMissingPrograms() {
        let engine = player.engine
        guard engine.missingPrograms.load(ordering: .relaxed) > 0 else { return }
        let last = engine.lastMissingProgram.load(ordering: .relaxed)
        guard !toldOfMissingPrograms.contains(last), let text = missingProgramsText(engine, loaded) else { return }
        toldOfMissingPrograms.insert(last)
        console.line("  " + text)
    }

    /// Once a session, the first time a key outside the map's is played (silently, else), says
    /// so with the fix: a full-size keyboard has 75 keys the bundled bells do not reach.
    func tellOfUnmappedNotes() {
        guard !toldOfUnmappedNotes, player.engine.ignoredNotes.load(ordering: .relaxed) > 0 else { return }
        toldOfUnmappedNotes = true
        var instrument = loaded.instrumentSets.startingInstrument
        if let mode = settings.notes.unmapped { instrument.unmappedNotes = mode }
        console.line(
            "  "
                + unmappedNotesText(
                    1, of: 1, in: nil, instrument: instrument, transpose: player.engine.configuration.transpose))
    }

    func loopText() -> String {
        let rate = Double(output.configuration.sampleRate)
        let looper = player.looper
        switch looper.state {
        case .empty:
            return "off (Enter records)"
        case .recording(let start):
            let seconds = Double(max(0, player.frame(arrival: monotonicInstant()) - start)) / rate
            return "recording \(secondsText(seconds, digits: 1)) s, \(looper.noteCount) notes (Enter closes)"
        case .looping(_, let length):
            return
                "playing \(secondsText(Double(length) / rate, digits: 2)) s, \(looper.noteCount) notes (Backspace clears)"
        }
    }
}
