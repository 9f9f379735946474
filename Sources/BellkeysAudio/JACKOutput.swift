import BellkeysControl
import BellkeysEngine
import BellkeysModel
import BellkeysSystem
import CJack
import Glibc
import Synchronization

/// A failure to use JACK, in words: what failed, and what to do about it.
public struct JACKError: Error, CustomStringConvertible {
    public enum Kind: Sendable { case notInstalled, noServer, refused }
    public let kind: Kind
    public let description: String
}

/// Where the output ports are connected when the client starts.
public enum JACKConnection: Equatable, Sendable {
    /// To the server's physical playback ports, in order (a mono output to the first two).
    case physical
    /// Nowhere: the user connects them (qjackctl, `jack_connect`, a session manager).
    case none
    /// To these ports, in order: out_1 to the first, and so on. A name without a colon stands
    /// for that client's audio input ports, in order.
    case ports([String])
}

/// The JACK driver: a client named `bellkeys` with one audio output port per channel
/// (`out_1`, `out_2`, ...) and one MIDI input port (`midi_in`). JACK calls `process` once per
/// cycle on its real-time thread; it reads the cycle's MIDI events and plays each at its frame
/// offset (`LiveMixer.playNow`: no latency added, no jitter), then renders the cycle with the
/// same mixer and engine as the ALSA driver into the port buffers. The server's rate and buffer
/// size are followed, never set; libjack is loaded at run time (`bk_jack_load`), so bellkeys
/// runs without it through ALSA.
///
/// Threads: `process` runs on JACK's process thread (real-time, lock- and allocation-free);
/// the callbacks `serverStopped`, `bufferSizeChanged`, `xrun` and `portsChanged` on JACK's
/// notification thread (atomics only); everything else on the control thread.
public final class JACKOutput: AudioOutput, @unchecked Sendable {
    public private(set) var configuration: OutputConfiguration
    /// The server, for messages: `'default'` (or `JACK_DEFAULT_SERVER`'s name, quoted), or
    /// `PipeWire` when PipeWire's libjack was loaded.
    public let serverName: String
    /// The client's name, as the server granted it (`bellkeys`, or `bellkeys-01` beside another).
    public let clientName: String
    let client: OpaquePointer
    let outputPorts: UnsafeMutablePointer<OpaquePointer>
    let midiPort: OpaquePointer
    /// The process callback's port buffers for the cycle, one per channel.
    let channelBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Output ports (a copy of `configuration.channels` the process thread reads without
    /// copying the configuration, whose strings are reference-counted).
    let channelCount: Int
    /// The MIDI channels played: `--channel`, `--skip-drums`.
    let channelFilter: ChannelFilter

    // Process-thread state, set before `jack_activate` and not changed while active.
    var mixer: Unmanaged<LiveMixer>?
    var tap: Unmanaged<AudioTap>?
    /// Strong references behind `mixer` and `tap`, held by the control thread.
    var ownedMixer: LiveMixer?
    var ownedTap: AudioTap?
    /// The frame time the next cycle should start at (process thread only).
    var expectedFrameTime: UInt32 = 0
    var hasCycled = false
    var lastFrameCount = 0

    // Counters, written on JACK's threads, read anywhere.
    /// Xruns the server reported (any client's, or the driver's).
    public let xruns = Atomic<Int>(0)
    /// Cycles the server did not run bellkeys in (its frame time moved on by more than the
    /// last cycle), counted in periods, and the frames they held; and cycles whose frame time
    /// went back (PipeWire, catching up after a stall, can run a cycle with the last one's frame
    /// time), and the frames it went back by. Each such jump restarts the clock line that places
    /// ALSA sequencer events.
    public let skippedCycles = Atomic<Int>(0)
    public let skippedFrames = Atomic<Int>(0)
    public let repeatedCycles = Atomic<Int>(0)
    public let repeatedFrames = Atomic<Int>(0)
    /// The server's buffer size now, and how often it changed while playing.
    public let bufferFrames = Atomic<Int>(0)
    public let bufferSizeChanges = Atomic<Int>(0)
    /// JACK MIDI events played (after the --channel filter), and those the engine does not play.
    public let midiEventsPlayed = Atomic<Int>(0)
    public let midiEventsIgnored = Atomic<Int>(0)
    /// Process cycles run, the nanoseconds spent in them, and the longest one.
    public let cycles = Atomic<Int>(0)
    public let busyNanoseconds = Atomic<UInt64>(0)
    public let longestCycleNanoseconds = Atomic<UInt64>(0)
    /// Set when the server went away (`jack_on_info_shutdown`).
    let serverStopped = Atomic<Bool>(false)
    /// Set when ports appeared or connections changed; the control thread looks again.
    let graphChanged = Atomic<Bool>(false)
    /// Signalled on a graph change and the server's end (JACK's notification thread; never from
    /// the process callback, nor from the xrun and buffer-size callbacks, which PipeWire's JACK
    /// and JACK1 may call on the process thread), so that the control thread sees them while asleep.
    public let wakeup = Wakeup()
    /// Connections to `midi_in` removed so far (counted as they go, so that a sender that came
    /// and went between two looks of the control thread is not missed).
    public let midiDisconnections = Atomic<Int>(0)
    /// `jack_activate`'s status when it failed, else 0. Thread: control.
    var activationStatus: Int32 = 0
    var isActive = false
    var isClosed = false
    /// Where `start` connects the output ports, and what it said of each connection.
    let outputConnection: JACKConnection
    var connectionLines: [String] = []
    /// The process callback's share of the cycle between two status lines. Thread: control.
    var statusLoad = CycleLoad()

    /// Loads libjack and opens a client of the running server (it never starts one).
    /// - Parameters:
    ///   - channels: audio output ports.
    ///   - filter: the MIDI channels to play.
    ///   - connection: where `start` connects the output ports.
    public init(
        clientName: String = "bellkeys", channels: Int, filter: ChannelFilter = .all,
        connection: JACKConnection = .physical
    ) throws(JACKError) {
        precondition(channels > 0)
        outputConnection = connection
        if let problem = loadJACK() {
            throw JACKError(
                kind: .notInstalled,
                description: """
                    JACK is not installed: \(problem).
                        fix: install it (Debian: `sudo apt install jackd2`, or `pipewire-jack` on a PipeWire desktop), \
                    or play through ALSA: --driver alsa
                    """)
        }
        // PipeWire's libjack (under pw-jack) talks to PipeWire, whatever the server name says.
        let server =
            bk_jack_is_pipewire() != 0
            ? "PipeWire" : "'" + (getenv("JACK_DEFAULT_SERVER").map { String(cString: $0) } ?? "default") + "'"
        serverName = server
        var status: Int32 = 0
        guard let opened = bk_jack_client_open(clientName, Int32(BK_JACK_NO_START_SERVER), &status) else {
            throw JACKError(
                kind: status & Int32(BK_JACK_SERVER_FAILED) != 0 ? .noServer : .refused,
                description: Self.openFailure(status: status, server: server))
        }
        client = opened
        self.clientName = String(cString: bk_jack_get_client_name(opened))
        channelFilter = filter
        channelCount = channels
        outputPorts = .allocate(capacity: channels)
        channelBuffers = .allocate(capacity: channels)
        let flagsOut = UInt(BK_JACK_PORT_IS_OUTPUT | BK_JACK_PORT_IS_TERMINAL)
        for index in 0..<channels {
            guard let port = bk_jack_port_register(opened, "out_\(index + 1)", BK_JACK_AUDIO_TYPE, flagsOut, 0) else {
                bk_jack_client_close(opened)
                throw JACKError(
                    kind: .refused,
                    description: "the JACK server refused the audio port out_\(index + 1) (jack_port_register)")
            }
            (outputPorts + index).initialize(to: port)
        }
        guard
            let midi = bk_jack_port_register(
                opened, "midi_in", BK_JACK_MIDI_TYPE,
                UInt(BK_JACK_PORT_IS_INPUT | BK_JACK_PORT_IS_TERMINAL), 0)
        else {
            bk_jack_client_close(opened)
            throw JACKError(
                kind: .refused, description: "the JACK server refused the MIDI port midi_in (jack_port_register)")
        }
        midiPort = midi
        let rate = Int(bk_jack_get_sample_rate(opened))
        let period = Int(bk_jack_get_buffer_size(opened))
        configuration = OutputConfiguration(
            device: "JACK server \(server)", sampleRate: rate, channels: channels,
            format: .f32, periodFrames: period, bufferFrames: period)
        bufferFrames.store(period, ordering: .relaxed)
        installCallbacks(on: opened)
    }

    /// Hands JACK the callbacks of a client just opened: the process callback (the render
    /// path), buffer size changes, xruns, the server's shutdown, and changes of the port graph.
    /// Each reaches this output through an unretained pointer: the output closes the client
    /// (`close`, from `deinit`) before it goes, so no callback outlives it. Thread: control.
    private func installCallbacks(on opened: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        bk_jack_set_process_callback(
            opened,
            { frames, context in
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.process(frameCount: Int(frames))
                }
                return 0
            }, context)
        bk_jack_set_buffer_size_callback(
            opened,
            { frames, context in
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.bufferSizeChanged(to: Int(frames))
                }
                return 0
            }, context)
        bk_jack_set_xrun_callback(
            opened,
            { context in
                // No wake-up: PipeWire's JACK calls this on the process thread.
                _ = Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.xruns.wrappingAdd(1, ordering: .relaxed)
                }
                return 0
            }, context)
        bk_jack_on_info_shutdown(
            opened,
            { _, _, context in
                // Like a signal handler: atomics and write(2) only.
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.serverStopped.store(true, ordering: .releasing)
                    $0.wakeup.signal()
                }
            }, context)
        // Both: JACK calls only the info one when both are set; PipeWire's JACK may call either.
        bk_jack_on_shutdown(
            opened,
            { context in
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.serverStopped.store(true, ordering: .releasing)
                    $0.wakeup.signal()
                }
            }, context)
        bk_jack_set_port_registration_callback(
            opened,
            { _, _, context in
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.graphChanged.store(true, ordering: .releasing)
                    $0.wakeup.signal()
                }
            }, context)
        bk_jack_set_port_connect_callback(
            opened,
            { a, b, connected, context in
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.connectionChanged(a, b, connected: connected != 0)
                }
            }, context)
    }

    deinit {
        close()
        outputPorts.deallocate()
        channelBuffers.deallocate()
    }

    /// Why `jack_client_open` failed, and what to do.
    static func openFailure(status: Int32, server: String) -> String {
        if status & Int32(BK_JACK_SERVER_FAILED) != 0 {
            return """
                no JACK server \(server) is running (jack_client_open).
                    fix: start one (`jackd -d alsa -d hw:0`, qjackctl, or a PipeWire desktop's own, through `pw-jack bellkeys`), \
                or play through ALSA, which needs no server: --driver alsa
                """
        }
        if status & Int32(BK_JACK_VERSION_ERROR) != 0 {
            return
                "the JACK server \(server) speaks another protocol version than this libjack (jack_client_open); install matching JACK packages"
        }
        return
            "cannot open a client of the JACK server \(server) (jack_client_open status 0x\(String(status, radix: 16)))"
    }

    // MARK: The control thread

    /// The largest period the mixer renders at once: a JACK cycle is taken in parts of at most
    /// this, so that a server switching to any buffer size needs nothing allocated.
    public var maximumPeriodFrames: Int { 1_024 }

    public func start(pulling mixer: LiveMixer, tap: AudioTap?, priority: Int32) -> RealTimeScheduling {
        precondition(!isActive, "an output is started once")
        precondition(mixer.format == .f32 && mixer.channels == configuration.channels)
        ownedMixer = mixer
        ownedTap = tap
        self.mixer = Unmanaged.passUnretained(mixer)
        self.tap = tap.map { Unmanaged.passUnretained($0) }
        let status = bk_jack_activate(client)
        isActive = status == 0
        activationStatus = status
        if status != 0 { return .normal(errno: 0) }
        connectionLines = connectOutputs(outputConnection)
        if bk_jack_is_realtime(client) != 0 {
            return .realTime(priority: bk_jack_client_real_time_priority(client))
        }
        return .normal(errno: 0)
    }

    public var failure: String? {
        if activationStatus != 0 {
            return "the JACK server \(serverName) refused to start the client (jack_activate: \(activationStatus))"
        }
        return serverStopped.load(ordering: .acquiring)
            ? "the JACK server \(serverName) went away (stopped or killed)" : nil
    }

    public func stop() {
        close()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        // With the server gone, closing would talk to it (and could wait on a server that
        // hangs rather than died): the process is ending, and the kernel frees the rest.
        guard !serverStopped.load(ordering: .acquiring) else { return }
        if isActive { bk_jack_deactivate(client) }
        isActive = false
        bk_jack_client_close(client)
    }

    public var underrunCount: Int { xruns.load(ordering: .relaxed) }

    public var wakeDescriptor: FileDescriptor? { FileDescriptor(wakeup.descriptor) }
}

/// Loads libjack (once); returns nil, or the dynamic linker's words for why not.
func loadJACK() -> String? {
    var error = [UInt8](repeating: 0, count: 512)
    let status = error.withUnsafeMutableBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { bk_jack_load($0.baseAddress, $0.count) }
    }
    guard status != 0 else { return nil }
    return String(decoding: error.prefix { $0 != 0 }, as: UTF8.self)
}
