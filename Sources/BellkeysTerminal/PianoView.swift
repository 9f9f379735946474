/// The 13 keys drawn as a small piano, C4 to C5 left to right (the tutorial's buttons,
/// tags 100 to 112), each showing its note and its computer key. A lit key is drawn in
/// reverse video (`ESC [7m`), the way every terminal can show it.
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
    static let whiteOffsets = [0, 2, 4, 5, 7, 9, 11, 12]
    /// Black keys: semitone above C4, and the white key they sit after.
    static let blackKeys = [(1, 0), (3, 1), (6, 3), (8, 4), (10, 5)]
    static let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B", "C"]

    /// The piano's eight lines; `lit(offset)` says whether C4 + offset (0...12) is lit.
    public static func lines(indent: Int = 2, lit: (Int) -> Bool) -> [String] {
        let pad = String(repeating: " ", count: indent)
        func box(_ offset: Int, _ label: String) -> String {
            let text = String(repeating: " ", count: max(0, 2 - label.count)) + label
            return "│" + (lit(offset) ? reverse + text + normal : text) + "│"
        }
        func blackRow(_ part: (Int) -> String) -> String {
            var line = pad, column = 0
            for (offset, after) in blackKeys {
                let start = after * 4 + 2
                line += String(repeating: " ", count: start - column) + part(offset)
                column = start + 4
            }
            return line
        }
        func whiteRow(_ part: (Int) -> String) -> String {
            pad + whiteOffsets.map(part).joined()
        }
        let key = { (offset: Int) in String(TerminalKeyboard.noteKeys[offset]) }
        let label = { (offset: Int) in
            offset == 12 ? "C5" : names[offset].count == 1 ? names[offset] + "4" : names[offset]
        }
        return [
            blackRow { _ in "┌──┐" },
            blackRow { box($0, label($0)) },
            blackRow { box($0, key($0)) },
            blackRow { _ in "└──┘" },
            whiteRow { _ in "┌──┐" },
            whiteRow { box($0, label($0)) },
            whiteRow { box($0, key($0)) },
            whiteRow { _ in "└──┘" },
        ]
    }
}
