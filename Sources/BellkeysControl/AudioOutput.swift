import BellkeysEngine

/// What a sound output runs at, as the device granted it.
public struct OutputConfiguration: Sendable, Equatable {
    /// The device's name, for reports (`plughw:0,0`, `memory`).
    public var device: String
    public var sampleRate: Int
    public var channels: Int
    public var format: OutputSampleFormat
    public var periodFrames: Int
    public var bufferFrames: Int

    public init(
        device: String, sampleRate: Int, channels: Int, format: OutputSampleFormat, periodFrames: Int,
        bufferFrames: Int
    ) {
        self.device = device
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }

    public var periods: Int { bufferFrames / max(periodFrames, 1) }
    public var bufferMilliseconds: Double { Double(bufferFrames) * 1000 / Double(sampleRate) }
}

/// How an output's real-time side (its thread or callback) is scheduled.
public enum RealTimeScheduling: Equatable, Sendable {
    /// SCHED_FIFO at this priority.
    case realTime(priority: Int32)
    /// Normal scheduling, because real-time was refused with this errno.
    case normal(errno: Int32)
}

/// A sound output driver. It is pull-based: the driver owns the real-time side (ALSA: a thread
/// that writes each period; JACK: the process callback) and, each period, asks the `LiveMixer`
/// to render (`renderPeriod`, at most `maximumPeriodFrames`), plays `mixer.output`, and pushes
/// what it played into the recording tap; when the device's clock jumps (an underrun), it calls
/// `mixer.clock.restart()`. A driver moves frames and adds no logic: rendering, stamps and events are the
/// mixer's and the player's, the same for every driver.
///
/// Thread: control, for every member; a driver's own real-time side calls only the mixer's
/// `renderPeriod`, its clock's `restart` and the tap's `push`.
public protocol AudioOutput: AnyObject {
    /// What the device runs at.
    var configuration: OutputConfiguration { get }
    /// Starts pulling periods from `mixer` (built for `configuration`), pushing each period
    /// played into `tap` if given. Returns how the real-time side runs.
    func start(pulling mixer: LiveMixer, tap: AudioTap?, priority: Int32) -> RealTimeScheduling
    /// Why the output stopped by itself, in a sentence that names the device ("the sound
    /// device hw:0 failed: ...", "the JACK server 'default' went away ..."), or nil while it plays.
    var failure: String? { get }
    /// Stops pulling, after the period under way, and drops what the device still holds.
    func stop()
    /// Underruns (the device ran dry and was restarted) so far; with JACK, the server's xruns.
    var underrunCount: Int { get }
    /// The most frames the driver asks the mixer for at once: the mixer is built for it.
    var maximumPeriodFrames: Int { get }
    /// A descriptor that becomes readable when the output has news for the control thread (an
    /// underrun, a failure, a JACK graph change), which may be asleep with nothing sounding;
    /// the loop reads it empty (an eventfd). Nil: the output has none.
    var wakeDescriptor: FileDescriptor? { get }
    /// The driver's own upkeep, on each pass of the control loop at `now`: the
    /// ALSA buffer grows after underruns. Returns lines for the console (what changed).
    func maintain(now: MonotonicInstant) -> [String]

    // What the driver says of itself: the session prints these as they come and names no driver.

    /// The start-up report's lines about the output, once started with `scheduling` (what
    /// `start` returned): the device and its format, where it is connected, how the real-time
    /// side runs, and the fix when it runs without real-time scheduling.
    func startupLines(scheduling: RealTimeScheduling) -> [String]
    /// The status line's part about the output ("underruns 0"), taken at each update: a driver
    /// may measure since the last call.
    func statusText() -> String
    /// The closing line's counters about the output; `mixer` is the one it pulled.
    func closingText(mixer: LiveMixer) -> String
}

extension AudioOutput {
    /// A driver with a fixed period renders exactly that.
    public var maximumPeriodFrames: Int { configuration.periodFrames }
    public var wakeDescriptor: FileDescriptor? { nil }
    public func maintain(now: MonotonicInstant) -> [String] { [] }
}

/// One row of the driver table (`--driver`, `bellkeys list`): a driver's name and what it finds
/// on this machine. Thread: control.
public struct OutputDriverListing: Sendable {
    /// The driver's name, as `--driver` takes it.
    public var name: String
    /// The lines `bellkeys list` prints under the driver's heading (devices, or the server).
    public var lines: [String]
    /// Whether the driver could play here (a sound card, a running server).
    public var canPlay: Bool

    public init(name: String, lines: [String], canPlay: Bool) {
        self.name = name
        self.lines = lines
        self.canPlay = canPlay
    }
}

/// An output with no device, for tests, as NIOEmbedded is for NIO: nothing runs by itself;
/// `pull` renders periods on the calling thread, at the times the test gives, and keeps every
/// byte played. Thread: the test's.
public final class MemoryOutput: AudioOutput {
    public let configuration: OutputConfiguration
    public private(set) var mixer: LiveMixer?
    private var tap: AudioTap?
    /// Every period played, interleaved in the configuration's format.
    public private(set) var bytes: [UInt8] = []
    /// Set by a test to make the device fail.
    public var failure: String?
    public private(set) var isStopped = false
    public var underrunCount: Int { 0 }
    /// Set by a test: a descriptor the loop waits on for the output's news.
    public var wakeDescriptor: FileDescriptor?
    /// Set by a test: the lines the next `maintain` says.
    public var linesToSay: [String] = []
    /// The times `maintain` was called at.
    public private(set) var maintained: [MonotonicInstant] = []

    public init(sampleRate: Int = 48_000, channels: Int = 1, format: OutputSampleFormat = .f32, periodFrames: Int = 64)
    {
        configuration = OutputConfiguration(
            device: "memory", sampleRate: sampleRate, channels: channels, format: format,
            periodFrames: periodFrames, bufferFrames: 2 * periodFrames)
    }

    public func start(pulling mixer: LiveMixer, tap: AudioTap?, priority: Int32) -> RealTimeScheduling {
        precondition(configuration.periodFrames <= mixer.maximumPeriodFrames)
        self.mixer = mixer
        self.tap = tap
        isStopped = false
        return .realTime(priority: priority)
    }

    /// Renders one period that starts at `nanoseconds` (monotonic) and keeps it. Does nothing
    /// before `start`, after `stop` or once failed.
    public func pull(atNanoseconds nanoseconds: UInt64) {
        guard let mixer, !isStopped, failure == nil else { return }
        let frames = configuration.periodFrames
        mixer.renderPeriod(frameCount: frames, nanoseconds: nanoseconds)
        bytes += UnsafeRawBufferPointer(start: mixer.output, count: frames * mixer.frameByteCount)
        tap?.push(mixer.output, frameCount: frames)
    }

    /// The samples played so far, for a float format.
    public var floats: [Float] {
        bytes.withUnsafeBytes { raw in
            (0..<raw.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
        }
    }

    public func stop() { isStopped = true }

    public func maintain(now: MonotonicInstant) -> [String] {
        maintained.append(now)
        defer { linesToSay = [] }
        return linesToSay
    }

    public func startupLines(scheduling: RealTimeScheduling) -> [String] {
        [
            "  output memory: \(configuration.sampleRate) Hz, \(configuration.channels) ch, period \(configuration.periodFrames) frames"
        ]
    }

    public func statusText() -> String { "underruns 0" }

    public func closingText(mixer: LiveMixer) -> String { "underruns: 0" }
}
