/// A key on the computer keyboard, as the terminal reports it.
public enum Key: Equatable, Hashable, Sendable {
    /// A printable key, by the character it types unshifted (`a`, `-`, ` `).
    case character(Character)
    case escape, enter, backspace, tab
    case up, down, left, right
    /// Ctrl with a letter (`c` for Ctrl-C).
    case control(Character)
}

/// What happened to a key. Terminals without the kitty keyboard protocol report presses only
/// (auto-repeat arrives as more presses).
public enum KeyAction: Equatable, Sendable {
    case press, `repeat`, release
}

/// One decoded piece of terminal input.
public enum TerminalInput: Equatable, Sendable {
    case key(Key, KeyAction)
    /// The answer to the kitty keyboard query (`CSI ? u`): the terminal supports the protocol.
    case kittyKeyboardFlags(Int)
    /// The answer to Primary Device Attributes (`CSI c`), which every terminal sends; it comes
    /// after a kitty answer, so it ends the wait for one.
    case deviceAttributes
}

/// Turns the bytes a terminal sends into keys: legacy bytes and escape sequences (xterm, the
/// Linux console, tmux) and the kitty keyboard protocol's `CSI … u` form with event types
/// (press, repeat, release).
///
/// Input may arrive split anywhere; an unfinished sequence waits for the next `feed`. A lone
/// ESC is ambiguous (the Esc key, or the start of a sequence): it stays pending until
/// `flush()`, which the caller calls when no more bytes came within a few milliseconds.
/// Thread: control.
public struct TerminalInputParser: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// Whether bytes are waiting for the rest of a sequence.
    public var hasPending: Bool { !pending.isEmpty }

    /// Decodes `bytes` (after anything pending).
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [TerminalInput] {
        pending.append(contentsOf: bytes)
        var out: [TerminalInput] = []
        var i = 0
        while i < pending.count {
            guard let (input, length) = decode(at: i) else { break } // unfinished: wait
            if let input { out.append(input) }
            i += length
        }
        pending.removeFirst(i)
        return out
    }

    /// Ends the wait for a sequence: a lone ESC is the Esc key; anything else unfinished is
    /// dropped.
    public mutating func flush() -> [TerminalInput] {
        defer { pending.removeAll() }
        return pending == [0x1B] ? [.key(.escape, .press)] : []
    }

    /// The input at `i` and its byte length; nil when more bytes are needed. An input of nil
    /// with a length is skipped (a sequence bellkeys does not use).
    private func decode(at i: Int) -> (TerminalInput?, Int)? {
        let b = pending[i]
        switch b {
        case 0x1B:
            guard i + 1 < pending.count else { return nil }
            let next = pending[i + 1]
            if next == UInt8(ascii: "[") { return decodeCSI(at: i) }
            if next == UInt8(ascii: "O") {
                guard i + 2 < pending.count else { return nil }
                let key: Key? =
                    switch pending[i + 2] {
                    case UInt8(ascii: "A"): .up
                    case UInt8(ascii: "B"): .down
                    case UInt8(ascii: "C"): .right
                    case UInt8(ascii: "D"): .left
                    default: nil
                    }
                return (key.map { .key($0, .press) }, 3)
            }
            if next == 0x1B { return (.key(.escape, .press), 1) }
            return (nil, 2) // Alt+key: not used
        case 0x0D, 0x0A: return (.key(.enter, .press), 1)
        case 0x7F, 0x08: return (.key(.backspace, .press), 1)
        case 0x09: return (.key(.tab, .press), 1)
        case 0x01...0x1A: return (.key(.control(Character(UnicodeScalar(b + 0x60))), .press), 1)
        case 0x20...0x7E: return (.key(.character(Character(UnicodeScalar(b))), .press), 1)
        case 0xC0...0xFF:
            // A UTF-8 character: skip it whole (no note is on a non-ASCII key).
            let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
            return i + length <= pending.count ? (nil, length) : nil
        default: return (nil, 1)
        }
    }

    /// `ESC [ params final`: arrows (`CSI A`, `CSI 1;mods:event A`), the kitty form
    /// (`CSI code[:alternates] ; mods[:event] [; text] u`), and the query answers.
    private func decodeCSI(at i: Int) -> (TerminalInput?, Int)? {
        var j = i + 2
        while j < pending.count, !(0x40...0x7E).contains(pending[j]) { j += 1 }
        guard j < pending.count else { return pending.count - i > 64 ? (nil, pending.count - i) : nil }
        let length = j - i + 1
        let final = pending[j]
        let body = pending[(i + 2)..<j]
        if body.first == UInt8(ascii: "?") {
            if final == UInt8(ascii: "u") { return (.kittyKeyboardFlags(number(body.dropFirst()) ?? 0), length) }
            if final == UInt8(ascii: "c") { return (.deviceAttributes, length) }
            return (nil, length)
        }
        // Fields separated by ';', sub-fields by ':'.
        let fields = body.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        let first = fields.first.map { $0.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) } ?? []
        let modifierField =
            fields.count > 1 ? fields[1].split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) : []
        let modifiers = (modifierField.first.flatMap { number($0) } ?? 1) - 1
        let action: KeyAction =
            switch modifierField.count > 1 ? number(modifierField[1]) ?? 1 : 1 {
            case 2: .repeat
            case 3: .release
            default: .press
            }
        let key: Key?
        switch final {
        case UInt8(ascii: "A"): key = .up
        case UInt8(ascii: "B"): key = .down
        case UInt8(ascii: "C"): key = .right
        case UInt8(ascii: "D"): key = .left
        case UInt8(ascii: "u"):
            guard let code = first.first.flatMap({ number($0) }) else { return (nil, length) }
            key = Self.key(code: code, control: modifiers & 4 != 0)
        default: key = nil // function keys, Home, End…: not used
        }
        return (key.map { .key($0, action) }, length)
    }

    /// The key of a kitty key code (a Unicode code point, or one of its own for Esc, Enter…).
    static func key(code: Int, control: Bool) -> Key? {
        switch code {
        case 27: return .escape
        case 13: return .enter
        case 127, 8: return .backspace
        case 9: return .tab
        case 0x20...0x7E:
            var c = Character(UnicodeScalar(UInt8(code)))
            if control, c.isLetter {
                c = Character(c.lowercased())
                return .control(c)
            }
            return .character(c)
        default: return nil // modifier keys on their own, keypad, media keys
        }
    }

    private func number(_ digits: some Collection<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count < 10 else { return nil }
        var n = 0
        for d in digits {
            guard (0x30...0x39).contains(d) else { return nil }
            n = n * 10 + Int(d - 0x30)
        }
        return n
    }
}
