/// A live input the control thread's poll loop waits on and drains: a MIDI keyboard through the
/// ALSA sequencer, the computer keyboard, later phones over the network. Each plays what it read
/// through the `LivePlayer`, with its arrival time and a source number of its own (so that what
/// it holds is released if it goes away). The loop treats every input alike.
/// Thread: control.
public protocol LiveInput: AnyObject {
    /// File descriptors to wait on until one is readable (or hung up).
    var descriptors: [FileDescriptor] { get }
    /// The longest the loop may wait before calling `drain` again with nothing ready, in ms
    /// (a lone Esc waits 30 ms for the rest of a sequence), or nil for no limit of its own.
    var pollTimeoutMilliseconds: Int32? { get }
    /// Reads what arrived (`ready`: one of `descriptors` is readable or hung up) and plays it
    /// through `player`. Called on every pass of the loop, ready or not.
    func drain(ready: Bool, player: LivePlayer) -> InputOutcome
    /// The start-up report's line about the input, or nil for none.
    var startupLine: String? { get }
    /// The names of the keyboards connected through it now, for the status line.
    var connectedNames: [String] { get }
    /// Connects what is there at start (keyboards already plugged in) and reports it. Called
    /// once, after the output started.
    func connectPresent()
}

extension LiveInput {
    public var startupLine: String? { nil }
    public var connectedNames: [String] { [] }
    public func connectPresent() {}
}

/// What a live input asks of the session after `drain`.
public enum InputOutcome: Equatable, Sendable {
    /// Nothing: go on.
    case carryOn
    /// Quit as asked (a quit key, the terminal gone), with this reason.
    case quit(reason: String)
    /// The input broke (its device failed): fade out and exit with status 1, saying `message`
    /// (what failed, and alsa-lib's or the system's words) and stopping for `reason`.
    case failed(reason: String, message: String)
}
