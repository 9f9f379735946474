import BellkeysControl
import BellkeysIO
import Glibc

/// What the session does at the loop's turns: the parts of a pass that are the session's own
/// (a map reload, a room change, the screen). Thread: control.
public protocol LiveLoopDelegate: AnyObject {
    /// Each pass, after the inputs were drained and the player updated: changes that waited for
    /// the last one to ring out (a reload, a room) may go ahead.
    func loopDidPass()
    /// A signal arrived: a reason to stop (SIGINT, SIGTERM), or nil to go on (SIGHUP reloads).
    func loopReceived(signal: Int32) -> String?
    /// Time to draw the status area.
    func loopStatusDue()
}

/// The control thread's poll loop: waits on every live input and the signals at once, drains
/// each input in turn (they play through the player), lets the player do its wake-up work,
/// and watches the output and the tune. Every input is treated alike; what the session adds
/// comes through its delegate. Thread: control.
public final class LiveLoop {
    /// Why the loop ended.
    public enum End: Equatable, Sendable {
        /// An input (a quit key, the terminal gone) or a signal asked to stop.
        case quit(reason: String)
        /// An input broke: stop for `reason`, saying `message`.
        case inputFailed(reason: String, message: String)
        /// The output stopped by itself, in the driver's words.
        case outputFailed(String)
        /// The tune given to play has rung out.
        case tuneRungOut
    }

    public let inputs: [any LiveInput]
    let player: LivePlayer
    let output: any AudioOutput
    let signals: any SignalSource
    /// Seconds between two status updates.
    let statusSeconds: Double
    /// The monotonic clock in ns (a test's own in tests).
    let clock: () -> UInt64
    /// One descriptor set for the life of the loop: the signals, then each input's, and which
    /// input each belongs to (-1: the signals).
    private var descriptors: [pollfd]
    private let owner: [Int]
    private var nextStatus = 0.0

    public init(
        inputs: [any LiveInput], player: LivePlayer, output: any AudioOutput, signals: any SignalSource,
        statusSeconds: Double, clock: @escaping () -> UInt64 = monotonicNanoseconds
    ) {
        self.inputs = inputs
        self.player = player
        self.output = output
        self.signals = signals
        self.statusSeconds = statusSeconds
        self.clock = clock
        var descriptors = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0)]
        var owner = [-1]
        for (index, input) in inputs.enumerated() {
            for fd in input.descriptors {
                descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
                owner.append(index)
            }
        }
        self.descriptors = descriptors
        self.owner = owner
    }

    /// Runs passes until one ends the loop.
    public func run(delegate: any LiveLoopDelegate) -> End {
        while true {
            if let end = pass(delegate: delegate) { return end }
        }
    }

    /// One pass: waits until an input or a signal is ready (at most the shortest time an input
    /// asks for, else 50 ms), then drains, updates, and checks. Returns why to stop, or nil.
    public func pass(delegate: any LiveLoopDelegate) -> End? {
        _ = poll(&descriptors, nfds_t(descriptors.count), inputs.compactMap(\.pollTimeoutMilliseconds).min() ?? 50)
        for (index, input) in inputs.enumerated() {
            let ready = descriptors.indices.contains { owner[$0] == index && descriptors[$0].revents != 0 }
            switch input.drain(ready: ready, player: player) {
            case .carryOn: break
            case .quit(let reason): return .quit(reason: reason)
            case .failed(let reason, let message): return .inputFailed(reason: reason, message: message)
            }
        }
        player.update(arrival: clock())
        delegate.loopDidPass()
        while let signal = signals.next() {
            if let reason = delegate.loopReceived(signal: signal) { return .quit(reason: reason) }
        }
        if let failure = output.failure { return .outputFailed(failure) }
        if player.tuneHasRungOut { return .tuneRungOut }
        let now = Double(clock()) / 1e9
        if now >= nextStatus {
            nextStatus = now + statusSeconds
            delegate.loopStatusDue()
        }
        return nil
    }
}
