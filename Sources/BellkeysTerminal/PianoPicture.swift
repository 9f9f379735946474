/// The piano picture of an instrument under the report: which keys it shows, what is lit, and
/// the line under it that names the computer keyboard's octave and the notes sounding.
///
/// It shows the instrument's keys whole when they fit the terminal's width: a map's mapped
/// keys together with the 13 bells' C4..C5 (so the bundled bells and the example maps are
/// drawn as they always were), an SFZ instrument's playable range. Else it shows two octaves,
/// C to C, from the computer keyboard's lowest key (one octave in a terminal too narrow for two),
/// and moves with the keyboard. A note sounding beyond the keys drawn (from MIDI, or a map that
/// folds notes onto its bells) lights a mark at that side and is counted under the picture.
///
/// Thread: any (a pure value).
public struct PianoPicture: Sendable, Equatable {
    /// The keys that sound (for the text), if the instrument says.
    public let playable: ClosedRange<Int>?
    /// The instrument's keys as drawn when they fit: from a white key to a white key.
    public let keys: ClosedRange<Int>
    /// Columns before the picture (the marks below need 2).
    public let indent: Int

    /// The picture of an instrument that sounds `playable`; `isMap` for a map file (its keys are
    /// drawn with C4..C5), false for an SFZ instrument.
    public init(playable: ClosedRange<Int>?, isMap: Bool, indent: Int = 2) {
        self.playable = playable
        self.indent = indent
        let bells = 60...72
        let wanted =
            playable.map { isMap ? min($0.lowerBound, bells.lowerBound)...max($0.upperBound, bells.upperBound) : $0 }
            ?? bells
        keys = PianoView.whiteEnded(wanted.clamped(to: 0...127))
    }

    /// The keys drawn with the computer keyboard at `keyboardLowest`, in `columns`: the
    /// instrument's, or else two octaves from the keyboard's C (C8..G9 at the top, so they hold
    /// the keyboard's last octave), or one in a terminal too narrow for two.
    public func shown(keyboardLowest: Int, columns: Int) -> ClosedRange<Int> {
        if PianoView.width(of: keys, indent: indent) < columns { return keys }
        func window(semitones: Int) -> ClosedRange<Int> {
            let start = min(keyboardLowest, ((127 - semitones) / 12 + 1) * 12)
            return start...min(127, start + semitones)
        }
        let twoOctaves = window(semitones: 24)
        return PianoView.width(of: twoOctaves, indent: indent) < columns ? twoOctaves : window(semitones: 12)
    }

    /// The picture's eight lines and the line under it, with the computer keyboard at
    /// `keyboardLowest` and the notes `sounding` (MIDI notes, ascending), in `columns`.
    public func lines(keyboardLowest: Int, columns: Int, sounding: [Int]) -> [String] {
        let shown = shown(keyboardLowest: keyboardLowest, columns: columns)
        let beyond = sounding.filter { !shown.contains($0) }
        var lines = PianoView.lines(
            indent: indent, keys: shown, keyboardLowest: keyboardLowest,
            below: beyond.contains { $0 < shown.lowerBound }, above: beyond.contains { $0 > shown.upperBound },
            lit: sounding.contains)
        let pad = String(repeating: " ", count: indent)
        var text = pad + "keys play " + Self.rangeText(TerminalKeyboard.notes(lowest: keyboardLowest)) + " (←/→ octave)"
        if shown != keys {
            text += " · showing " + Self.rangeText(shown) + (playable.map { " of " + Self.rangeText($0) } ?? "")
        }
        text += " · sounding: " + (sounding.isEmpty ? "-" : sounding.map(Self.noteName).joined(separator: " "))
        if !beyond.isEmpty { text += " (\(beyond.count) beyond the picture)" }
        lines.append(text)
        return lines
    }

    /// `C4..C5`.
    public static func rangeText(_ range: ClosedRange<Int>) -> String {
        noteName(range.lowerBound) + ".." + noteName(range.upperBound)
    }

    /// A note's name with sharps, like `C#4` (C-1 is 0).
    public static func noteName(_ note: Int) -> String {
        PianoView.names[note % 12] + String(note / 12 - 1)
    }
}
