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
    /// The next set of a map of several (the first after the last).
    case nextSet
    /// The note keys moved an octave: they play from `lowestNote` (a C) up.
    case octave(lowestNote: Int)
    case quit(String)
}

/// The computer keyboard as a 13-key keyboard: the layout, and what note-off means.
///
/// Layout: `a w s e d f t g y h u j k` play an octave from a C (C4..C5 at first), a piano
/// octave on two rows (white keys on the home row, black keys above); ← and → (or `<` and `>`,
/// that is `,` and `.` unshifted) move them down and up an octave, within C-1..G9 (MIDI 0 to
/// 127). Space is the sustain pedal, `x` damps every bell
/// (all notes off), `r` changes the room (the reverb: off, room, hall, church), `p` the set
/// (with a map of several),
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
    /// The note keys, a C to the C above, in order.
    public static let noteKeys: [Character] = ["a", "w", "s", "e", "d", "f", "t", "g", "y", "h", "u", "j", "k"]
    /// The highest C the note keys may start from (they reach G9, MIDI 127, there).
    public static let highestLowestNote = 120
    public static let volumeStepDecibels = 2.0
    /// Presses of one key closer than this are auto-repeat (terminals repeat at 25 to 40 Hz;
    /// a player strikes one key at most about 10 times a second).
    public static let repeatSeconds = 0.1

    /// Whether the terminal reports key releases (kitty keyboard protocol, flag 2).
    public var reportsReleases = false
    public private(set) var pedalDown = false
    /// The note of the `a` key: a C, 0 to `highestLowestNote`.
    public private(set) var lowestNote: Int
    /// The note each key held down struck (with releases reported): its release ends that note
    /// even after an octave shift.
    private var heldNotes: [Character: Int] = [:]
    private var lastPress: [Character: Double] = [:]

    /// The note keys from `lowestNote` (a C; another note is taken down to its C).
    public init(lowestNote: Int = 60) {
        self.lowestNote = min(max(0, lowestNote - lowestNote % 12), Self.highestLowestNote)
    }

    /// Notes whose key is down (with releases reported).
    public var notesDown: Set<Int> { Set(heldNotes.values) }

    /// The notes the keys play from `lowest`: 13, or fewer at the top of MIDI's range.
    public static func notes(lowest: Int) -> ClosedRange<Int> { lowest...min(127, lowest + noteKeys.count - 1) }

    /// The C to start from for an instrument that sounds `playable`: the one whose octave's
    /// middle (its F#) is nearest the range's (C4 for the 13 bells, and for none).
    public static func lowestNote(for playable: ClosedRange<Int>?) -> Int {
        guard let playable else { return 60 }
        let middle = Double(playable.lowerBound + playable.upperBound) / 2
        return min(max(0, Int(((middle - 6) / 12).rounded()) * 12), highestLowestNote)
    }

    /// The note a key plays, if any (letters in either case).
    public func note(for key: Key) -> Int? {
        guard case .character(let c) = key, let i = Self.noteKeys.firstIndex(of: Character(c.lowercased())) else {
            return nil
        }
        return lowestNote + i <= 127 ? lowestNote + i : nil
    }

    /// The commands for one key event at time `seconds` (any monotonic clock).
    public mutating func handle(_ key: Key, _ action: KeyAction, seconds: Double) -> [KeyboardCommand] {
        if case .character(let c) = key, Self.noteKeys.contains(Character(c.lowercased())) {
            let name = Character(c.lowercased())
            if reportsReleases {
                switch action {
                case .release:
                    guard let held = heldNotes.removeValue(forKey: name) else { return [] }
                    return [.noteOff(note: held)]
                case .press where heldNotes[name] == nil:
                    guard let note = note(for: key), !notesDown.contains(note) else { return [] }
                    heldNotes[name] = note
                    return [.noteOn(note: note)]
                default:
                    return []
                }
            }
            guard let note = note(for: key) else { return [] }
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
        case (.character("p"), .press), (.character("P"), .press):
            return [.nextSet]
        case (.left, .press), (.character(","), .press), (.character("<"), .press):
            return shift(by: -12)
        case (.right, .press), (.character("."), .press), (.character(">"), .press):
            return shift(by: 12)
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

    /// Moves the note keys `semitones` (an octave), unless that leaves 0...127.
    private mutating func shift(by semitones: Int) -> [KeyboardCommand] {
        let moved = lowestNote + semitones
        guard (0...Self.highestLowestNote).contains(moved) else { return [] }
        lowestNote = moved
        return [.octave(lowestNote: moved)]
    }
}
