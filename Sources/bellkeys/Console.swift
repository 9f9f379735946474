import BellkeysIO

/// Standard output with a live status area kept below everything printed: one status line, or
/// the keyboard UI's piano and status lines. Printed lines scroll above it and stay in the
/// terminal's history; the area is erased when the program ends.
/// Thread: control.
final class Console {
    /// Whether a status area is drawn (standard output is a terminal, and not --quiet).
    let live: Bool
    /// Terminal width, to keep each line of the area on one row (so it can be erased).
    var columns = 80
    private var shown: [String] = []

    init(live: Bool) { self.live = live }

    /// Prints a line above the status area.
    func line(_ text: String) {
        let area = shown
        erase()
        writeAll(1, text + "\n")
        draw(area)
    }

    /// Replaces the status area (on a terminal only); unchanged lines cost nothing.
    func status(_ lines: [String]) {
        guard live, lines != shown else { return }
        erase()
        draw(lines)
    }

    /// Erases the status area for good.
    func finish() { erase() }

    private func erase() {
        guard !shown.isEmpty else { return }
        writeAll(1, "\r" + String(repeating: "\u{1B}[A", count: shown.count - 1) + "\u{1B}[J")
        shown = []
    }

    private func draw(_ lines: [String]) {
        guard live, !lines.isEmpty else { return }
        // Plain lines are cut to the width; the piano's (with escapes) are narrower than any
        // terminal bellkeys draws it in.
        let fitted = lines.map { $0.contains("\u{1B}") || $0.count < columns ? $0 : String($0.prefix(columns - 1)) }
        writeAll(1, fitted.joined(separator: "\n"))
        shown = fitted
    }
}
