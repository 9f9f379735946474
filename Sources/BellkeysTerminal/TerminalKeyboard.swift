/// What a key on the computer keyboard asks the instrument to do.
public enum KeyboardCommand: Equatable, Sendable {
    case noteOn(note: Int)
    case noteOff(note: Int)
    case pedal(down: Bool)
    /// All notes off (CC123): every damped bell is damped, held or not.
    case damp
    case volume(stepDecibels: Double)
    /// Start recording a phrase, or close the loop.
    case loop
    case clearLoop
    /// The next room: off, room, hall, church, off...
    case nextRoom
    case quit(String)
}

/// The computer keyboard as a 13-key bell keyboard: the layout, and what note-off means.
///
/// Layout: `a w s e d f t g y h u j k` play C4..C5, a piano octave on two rows (white keys
/// on the home row, black keys above). Space is the sustain pedal, `x` damps every bell
/// (all notes off), `r` changes the room (the reverb: off, room, hall, church),
/// ↑/↓ (or `=`/`-`) change the volume by `volumeStepDecibels`, Enter
/// records and closes a phrase loop, Backspace clears it, Esc or Ctrl-C (or Ctrl-D) quits.
///
/// Note-off. A terminal that reports key releases (the kitty keyboard protocol) plays like a
/// MIDI keyboard: a key held down holds its note, and releasing it sends the note-off, so
/// damped keys stop on release; auto-repeat is ignored; the space bar is a held pedal.
/// Other terminals send presses only, with auto-repeat as more presses. There, a press strikes
/// the bell and it rings its whole length, like the tutorial's buttons (no note-off is ever
/// sent, since no release is known); `x` damps the bells; presses of a key less than
/// `repeatSeconds` after its previous press are auto-repeat and do not strike again; and the
/// space bar toggles the pedal. The first auto-repeat, after the terminal's repeat delay,
/// cannot be told from a deliberate second strike, so a key held down strikes twice; bellkeys
/// asks the terminal to turn auto-repeat off (DECARM, which xterm and the Linux console obey).
///
/// Thread: control.
public struct TerminalKeyboard: Sendable {
    /// The note keys, C4 (MIDI 60) to C5 (72), in order.
    public static let noteKeys: [Character] = ["a", "w", "s", "e", "d", "f", "t", "g", "y", "h", "u", "j", "k"]
    public static let lowestNote = 60
    public static let volumeStepDecibels = 2.0
    /// Presses of one key closer than this are auto-repeat (terminals repeat at 25 to 40 Hz;
    /// a player strikes one key at most about 10 times a second).
    public static let repeatSeconds = 0.1

    /// Whether the terminal reports key releases (kitty keyboard protocol, flag 2).
    public var reportsReleases = false
    public private(set) var pedalDown = false
    /// Notes whose key is down (with releases reported).
    public private(set) var notesDown = Set<Int>()
    private var lastPress: [Character: Double] = [:]

    public init() {}

    /// The note a key plays, if any (letters in either case).
    public static func note(for key: Key) -> Int? {
        guard case .character(let c) = key, let i = noteKeys.firstIndex(of: Character(c.lowercased())) else {
            return nil
        }
        return lowestNote + i
    }

    /// The commands for one key event at time `seconds` (any monotonic clock).
    public mutating func handle(_ key: Key, _ action: KeyAction, seconds: Double) -> [KeyboardCommand] {
        if let note = Self.note(for: key) {
            guard case .character(let c) = key else { return [] }
            let name = Character(c.lowercased())
            if reportsReleases {
                switch action {
                case .press where !notesDown.contains(note):
                    notesDown.insert(note)
                    return [.noteOn(note: note)]
                case .release where notesDown.contains(note):
                    notesDown.remove(note)
                    return [.noteOff(note: note)]
                default:
                    return []
                }
            }
            guard action == .press else { return [] }
            let previous = lastPress[name]
            lastPress[name] = seconds
            if let previous, seconds - previous < Self.repeatSeconds { return [] }
            return [.noteOn(note: note)]
        }
        switch (key, action) {
        case (.character(" "), .press):
            if reportsReleases {
                guard !pedalDown else { return [] }
                pedalDown = true
            } else {
                pedalDown.toggle()
            }
            return [.pedal(down: pedalDown)]
        case (.character(" "), .release):
            guard reportsReleases, pedalDown else { return [] }
            pedalDown = false
            return [.pedal(down: false)]
        case (.up, .press), (.up, .repeat), (.character("="), .press), (.character("="), .repeat),
            (.character("+"), .press), (.character("+"), .repeat):
            return [.volume(stepDecibels: Self.volumeStepDecibels)]
        case (.down, .press), (.down, .repeat), (.character("-"), .press), (.character("-"), .repeat):
            return [.volume(stepDecibels: -Self.volumeStepDecibels)]
        case (.character("x"), .press), (.character("X"), .press):
            return [.damp]
        case (.character("r"), .press), (.character("R"), .press):
            return [.nextRoom]
        case (.enter, .press):
            return [.loop]
        case (.backspace, .press):
            return [.clearLoop]
        case (.escape, .press):
            return [.quit("Esc")]
        case (.control("c"), .press):
            return [.quit("Ctrl-C")]
        case (.control("d"), .press):
            return [.quit("Ctrl-D")]
        default:
            return []
        }
    }
}
