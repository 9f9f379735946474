/// Keys drawn as a small piano, each showing its note and, within the computer keyboard's
/// octave, its computer key. A lit key is drawn in reverse video (`ESC [7m`), the way every
/// terminal can show it. The 13 bells, C4 to C5 (the tutorial's buttons, tags 100 to 112):
///
///       ┌──┐┌──┐    ┌──┐┌──┐┌──┐
///       │C#││D#│    │F#││G#││A#│
///       │ w││ e│    │ t││ y││ u│
///       └──┘└──┘    └──┘└──┘└──┘
///     ┌──┐┌──┐┌──┐┌──┐┌──┐┌──┐┌──┐┌──┐
///     │C4││D4││E4││F4││G4││A4││B4││C5│
///     │ a││ s││ d││ f││ g││ h││ j││ k│
///     └──┘└──┘└──┘└──┘└──┘└──┘└──┘└──┘
///
/// Thread: any (a pure function).
public enum PianoView {
    public static let reverse = "\u{1B}[7m", normal = "\u{1B}[27m"
    /// Marks on the white keys' name row: a note sounds below or above the keys drawn.
    public static let belowMark = "◀", aboveMark = "▶"
    static let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]

    /// Whether `note` is a white key.
    public static func isWhite(_ note: Int) -> Bool { names[note % 12].count == 1 }

    /// `range` widened by a semitone at an end that is a black key, so the picture starts and
    /// ends on white keys.
    public static func whiteEnded(_ range: ClosedRange<Int>) -> ClosedRange<Int> {
        let low = isWhite(range.lowerBound) ? range.lowerBound : range.lowerBound - 1
        let high = isWhite(range.upperBound) ? range.upperBound : range.upperBound + 1
        return low...high
    }

    /// The columns the picture of `keys` takes, with `indent` and room for the mark above it.
    public static func width(of keys: ClosedRange<Int>, indent: Int = 2) -> Int {
        indent + 4 * keys.filter(isWhite).count + 2
    }

    /// The piano's eight lines for `keys` (from a white key to a white key); `lit(note)` says
    /// whether a MIDI note is lit. The computer keys are shown for `keyboardLowest` (a C) up an
    /// octave; `below` and `above` put a mark beside the name row (it needs an indent of 2).
    public static func lines(
        indent: Int = 2, keys: ClosedRange<Int> = 60...72, keyboardLowest: Int = 60,
        below: Bool = false, above: Bool = false, lit: (Int) -> Bool
    ) -> [String] {
        let pad = String(repeating: " ", count: indent)
        let whites = keys.filter(isWhite)
        // Each black key and the index of the white key it sits after.
        let blacks = whites.enumerated().compactMap { i, white in
            keys.contains(white + 1) && !isWhite(white + 1) ? (white + 1, i) : nil
        }
        func box(_ note: Int, _ label: String) -> String {
            let text = String(repeating: " ", count: max(0, 2 - label.count)) + label
            return "│" + (lit(note) ? reverse + text + normal : text) + "│"
        }
        func blackRow(_ part: (Int) -> String) -> String {
            var line = pad, column = 0
            for (note, after) in blacks {
                let start = after * 4 + 2
                line += String(repeating: " ", count: start - column) + part(note)
                column = start + 4
            }
            return line
        }
        func whiteRow(_ part: (Int) -> String) -> String {
            pad + whites.map(part).joined()
        }
        let key = { (note: Int) in
            let offset = note - keyboardLowest
            return TerminalKeyboard.noteKeys.indices.contains(offset) ? String(TerminalKeyboard.noteKeys[offset]) : ""
        }
        // The octave -1 has no room for its number: its white keys show the letter alone.
        let label = { (note: Int) in
            isWhite(note) && note >= 12 ? names[note % 12] + String(note / 12 - 1) : names[note % 12]
        }
        var nameRow = whiteRow { box($0, label($0)) }
        if below, indent >= 2 { nameRow = belowMark + nameRow.dropFirst() }
        if above { nameRow += " " + aboveMark }
        return [
            blackRow { _ in "┌──┐" },
            blackRow { box($0, label($0)) },
            blackRow { box($0, key($0)) },
            blackRow { _ in "└──┘" },
            whiteRow { _ in "┌──┐" },
            nameRow,
            whiteRow { box($0, key($0)) },
            whiteRow { _ in "└──┘" },
        ]
    }
}
