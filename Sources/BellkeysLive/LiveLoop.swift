import BellkeysControl
import Glibc

/// What the session does at the loop's turns: the parts of a pass that are the session's own
/// (a reload or a room change that waited, the screen). What inputs and signals ask of it
/// comes through the player (`LivePlayer.ask`). Thread: control.
public protocol LiveLoopDelegate: AnyObject {
    /// Each pass, after the inputs were drained and the player updated: changes that waited for
    /// the last one to ring out (a reload, a room) may go ahead.
    func loopDidPass()
    /// Time to draw the status area.
    func loopStatusDue()
    /// Whether the session waits for nothing by itself (no reload or room change waiting for
    /// bells to ring out): with the player at rest, the loop may sleep until an input wakes it.
    var loopIsAtRest: Bool { get }
    /// A line the output driver has to say (its buffer grew).
    func loopOutputSaid(_ line: String)
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
    let clock: () -> MonotonicInstant
    /// One descriptor set for the life of the loop: the signals, the output's wake-up, then
    /// each input's, and which input each belongs to (-1: the signals, -2: the output).
    private var descriptors: [pollfd]
    private let owner: [Int]
    /// Where the output's wake-up descriptor is in `descriptors`, if it has one.
    private let wakeIndex: Int?
    private var nextStatus = 0.0
    /// Whether the status was drawn with everything at rest, and nothing has moved since: the
    /// screen is up to date, and the loop may sleep until something happens.
    private var drawnAtRest = false
    /// The longest wait while anything sounds or waits: the lit keys and the status follow the
    /// bells at this pace (the status itself is drawn every `statusSeconds`).
    public static let busyMilliseconds: Int32 = 50

    public init(
        inputs: [any LiveInput], player: LivePlayer, output: any AudioOutput, signals: any SignalSource,
        statusSeconds: Double, clock: @escaping () -> MonotonicInstant
    ) {
        self.inputs = inputs
        self.player = player
        self.output = output
        self.signals = signals
        self.statusSeconds = statusSeconds
        self.clock = clock
        var descriptors = [pollfd(fd: signals.signalDescriptor.rawValue, events: Int16(POLLIN), revents: 0)]
        var owner = [-1]
        if let wake = output.wakeDescriptor {
            descriptors.append(pollfd(fd: wake.rawValue, events: Int16(POLLIN), revents: 0))
            owner.append(-2)
        }
        for (index, input) in inputs.enumerated() {
            for fd in input.descriptors {
                descriptors.append(pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0))
                owner.append(index)
            }
        }
        self.descriptors = descriptors
        self.owner = owner
        wakeIndex = owner.firstIndex(of: -2)
    }

    /// Runs passes until one ends the loop.
    public func run(delegate: any LiveLoopDelegate) -> End {
        while true {
            if let end = pass(delegate: delegate) { return end }
        }
    }

    /// How long the next pass may wait for an input, a signal or the output, in ms (-1: until
    /// one is ready): the shortest time an input asks for; while anything sounds or waits,
    /// at most `busyMilliseconds`; at rest, with the status drawn, no limit.
    public func waitMilliseconds(delegate: any LiveLoopDelegate) -> Int32 {
        let asked = inputs.compactMap(\.pollTimeoutMilliseconds).min()
        if drawnAtRest, player.isAtRest, delegate.loopIsAtRest { return asked ?? -1 }
        drawnAtRest = false
        return min(asked ?? Self.busyMilliseconds, Self.busyMilliseconds)
    }

    /// One pass: waits until an input, a signal or the output is ready (see
    /// `waitMilliseconds`), then drains, updates, and checks. Returns why to stop, or nil.
    public func pass(delegate: any LiveLoopDelegate) -> End? {
        let ready = poll(&descriptors, nfds_t(descriptors.count), waitMilliseconds(delegate: delegate))
        if let index = wakeIndex, descriptors[index].revents != 0 {
            // The eventfd's count, read back to 0.
            var count: UInt64 = 0
            _ = read(descriptors[index].fd, &count, 8)
        }
        for line in output.maintain(now: clock()) { delegate.loopOutputSaid(line) }
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
        // SIGHUP asks for the map again, as an input asks for a room; SIGINT and SIGTERM stop.
        while let signal = signals.next() {
            guard signal == SIGHUP else { return .quit(reason: signal == SIGINT ? "SIGINT" : "SIGTERM") }
            player.ask(.reload)
        }
        if let failure = output.failure { return .outputFailed(failure) }
        if player.tuneHasRungOut { return .tuneRungOut }
        let now = clock().seconds
        if now >= nextStatus || (!drawnAtRest && player.isAtRest && delegate.loopIsAtRest) {
            // At rest, the status is drawn once more at once (the last key going dark), and the
            // loop may then sleep.
            let atRest = player.isAtRest && delegate.loopIsAtRest
            nextStatus = now + statusSeconds
            delegate.loopStatusDue()
            drawnAtRest = atRest
        } else if ready > 0 {
            // Something happened (a key that only moves the volume, a device joining) and the
            // status is not yet drawn with it: it will be when due.
            drawnAtRest = false
        }
        return nil
    }
}
