import CLinux
import Glibc

/// The controlling terminal in the keyboard UI's raw mode: keys arrive one by one, unechoed,
/// Ctrl-C and Ctrl-Z as bytes rather than signals. The terminal's settings, the cursor and
/// the kitty keyboard mode are restored by `restore()`, at `exit`, and on a crash (a fatal
/// signal handler written in C); SIGINT/SIGTERM/SIGHUP are the caller's (a signalfd) and it
/// restores before it exits.
///
/// Thread: control. Wraps `tcgetattr`/`tcsetattr`.
public final class Terminal {
    public let input: Int32 = 0
    public let output: Int32 = 1
    private var kittyKeyboard = false

    /// Whether standard input and output are both a terminal.
    public static var isInteractive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    /// Puts the terminal in raw mode, hides the cursor, turns key auto-repeat off (DECARM,
    /// where the terminal obeys it), and asks whether it speaks the kitty
    /// keyboard protocol (`CSI ? u`, answered before the Device Attributes answer to `CSI c`).
    public init() throws(SystemError) {
        guard bellkeys_terminal_save(input) == 0 else { throw SystemError(operation: "tcgetattr", code: errno) }
        _ = bellkeys_terminal_set_undo("\u{1B}[?8h\u{1B}[?25h")
        atexit { bellkeys_terminal_restore() }
        guard bellkeys_terminal_make_raw(input) == 0 else {
            let code = errno
            bellkeys_terminal_restore()
            throw SystemError(operation: "tcsetattr", code: code)
        }
        write("\u{1B}[?25l\u{1B}[?8l\u{1B}[?u\u{1B}[c")
    }

    deinit { restore() }

    /// Turns on the kitty keyboard protocol's key releases: flags 1 (disambiguate), 2 (event
    /// types: press, repeat, release) and 8 (every key as an escape code, so letters report
    /// their release too). Restoring pops them (`CSI < u`).
    public func enableKittyKeyboard() {
        guard !kittyKeyboard else { return }
        kittyKeyboard = true
        _ = bellkeys_terminal_set_undo("\u{1B}[<u\u{1B}[?8h\u{1B}[?25h")
        write("\u{1B}[>11u")
    }

    /// The bytes waiting on standard input; empty if none; nil at end of file or on an error
    /// (the terminal went away).
    public func read() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = Glibc.read(input, &buffer, buffer.count)
        if n > 0 { return Array(buffer[0..<n]) }
        if n < 0, errno == EAGAIN || errno == EINTR { return [] }
        return nil
    }

    /// The terminal's width in columns (80 if it does not say).
    public var columns: Int {
        var size = winsize()
        return ioctl(output, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }

    /// Writes `text` whole.
    public func write(_ text: String) {
        writeAll(output, text)
    }

    /// Undoes everything: kitty keyboard mode, hidden cursor, raw mode. Safe to call twice.
    public func restore() {
        bellkeys_terminal_restore()
    }
}

/// Writes all of `text` to `descriptor`, retrying partial writes; gives up on an error.
public func writeAll(_ descriptor: Int32, _ text: String) {
    var copy = text
    copy.withUTF8 { bytes in
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }
}
