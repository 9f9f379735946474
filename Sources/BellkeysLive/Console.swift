import BellkeysControl

/// Standard output with a live status area kept below everything printed: one status line, or
/// the keyboard UI's piano and status lines. Printed lines scroll above it and stay in the
/// terminal's history; the area is erased when the program ends.
/// Thread: control.
public final class Console {
    /// Whether a status area is drawn (standard output is a terminal, and not --quiet).
    public let live: Bool
    /// Terminal width, to keep each line of the area on one row (so it can be erased).
    public var columns = 80
    private var shown: [String] = []
    /// Where the text goes: standard output, or a test's collector.
    private let write: (String) -> Void

    /// A console on standard output, or on `write` (tests read what the inputs say).
    public init(live: Bool, write: @escaping (String) -> Void) {
        self.live = live
        self.write = write
    }

    /// Prints a line above the status area.
    public func line(_ text: String) {
        let area = shown
        erase()
        write(text + "\n")
        draw(area)
    }

    /// Replaces the status area (on a terminal only); unchanged lines cost nothing.
    public func status(_ lines: [String]) {
        guard live, lines != shown else { return }
        erase()
        draw(lines)
    }

    /// Erases the status area for good.
    public func finish() { erase() }

    private func erase() {
        guard !shown.isEmpty else { return }
        write("\r" + String(repeating: "\u{1B}[A", count: shown.count - 1) + "\u{1B}[J")
        shown = []
    }

    private func draw(_ lines: [String]) {
        guard live, !lines.isEmpty else { return }
        // Plain lines are cut to the width; the piano's (with escapes) are narrower than any
        // terminal bellkeys draws it in.
        let fitted = lines.map { $0.contains("\u{1B}") || $0.count < columns ? $0 : String($0.prefix(columns - 1)) }
        write(fitted.joined(separator: "\n"))
        shown = fitted
    }
}

/// One event as `aseqdump` shows it: source, event, channel (0-based, as aseqdump) and data.
public func describeEvent(source: String, message: MIDIMessage) -> String {
    let text: String
    switch message {
    case .noteOn(let channel, let note, let velocity):
        text = pad("Note on", 24) + "\(channel), note \(note), velocity \(velocity)"
    case .noteOff(let channel, let note, let velocity):
        text = pad("Note off", 24) + "\(channel), note \(note), velocity \(velocity)"
    case .controlChange(let channel, let controller, let value):
        text = pad("Control change", 24) + "\(channel), controller \(controller), value \(value)"
    case .pitchBend(let channel, let value):
        text = pad("Pitch bend", 24) + "\(channel), value \(Int(value) - 8192)"
    case .programChange(let channel, let program):
        text = pad("Program change", 24) + "\(channel), program \(program)"
    case .keyPressure(let channel, let note, let value):
        text = pad("Polyphonic aftertouch", 24) + "\(channel), note \(note), value \(value)"
    case .channelPressure(let channel, let value):
        text = pad("Channel aftertouch", 24) + "\(channel), value \(value)"
    }
    return pad(source, 7) + text
}
