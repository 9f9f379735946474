import BellkeysControl
import BellkeysEngine
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
    private let client: OpaquePointer
    private let outputPorts: UnsafeMutablePointer<OpaquePointer>
    private let midiPort: OpaquePointer
    /// The process callback's port buffers for the cycle, one per channel.
    private let channelBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Output ports (a copy of `configuration.channels` the process thread reads without
    /// copying the configuration, whose strings are reference-counted).
    private let channelCount: Int
    /// The MIDI channels played: `--channel`, `--skip-drums`.
    private let channelFilter: ChannelFilter

    // Process-thread state, set before `jack_activate` and not changed while active.
    private var mixer: Unmanaged<LiveMixer>?
    private var tap: Unmanaged<AudioTap>?
    /// Strong references behind `mixer` and `tap`, held by the control thread.
    private var ownedMixer: LiveMixer?
    private var ownedTap: AudioTap?
    /// The frame time the next cycle should start at (process thread only).
    private var expectedFrameTime: UInt32 = 0
    private var hasCycled = false
    private var lastFrameCount = 0

    // Counters, written on JACK's threads, read anywhere.
    /// Xruns the server reported (any client's, or the driver's).
    public let xruns = Atomic<Int>(0)
    /// Cycles that did not follow the previous one (the server skipped frames): each restarts
    /// the clock line that places ALSA sequencer events.
    public let skippedCycles = Atomic<Int>(0)
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
    private let serverStopped = Atomic<Bool>(false)
    /// Set when ports appeared or connections changed; the control thread looks again.
    private let graphChanged = Atomic<Bool>(false)
    /// Connections to `midi_in` removed so far (counted as they go, so that a sender that came
    /// and went between two looks of the control thread is not missed).
    public let midiDisconnections = Atomic<Int>(0)
    /// `jack_activate`'s status when it failed, else 0. Thread: control.
    private var activationStatus: Int32 = 0
    private var isActive = false
    private var isClosed = false

    /// Loads libjack and opens a client of the running server (it never starts one).
    /// - Parameters:
    ///   - channels: audio output ports.
    ///   - filter: the MIDI channels to play.
    public init(clientName: String = "bellkeys", channels: Int, filter: ChannelFilter = .all) throws(JACKError) {
        precondition(channels > 0)
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
                _ = Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.xruns.wrappingAdd(1, ordering: .relaxed)
                }
                return 0
            }, context)
        bk_jack_on_info_shutdown(
            opened,
            { _, _, context in
                // Like a signal handler: atomics only.
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.serverStopped.store(true, ordering: .releasing)
                }
            }, context)
        // Both: JACK calls only the info one when both are set; PipeWire's JACK may call either.
        bk_jack_on_shutdown(
            opened,
            { context in
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.serverStopped.store(true, ordering: .releasing)
                }
            }, context)
        bk_jack_set_port_registration_callback(
            opened,
            { _, _, context in
                Unmanaged<JACKOutput>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                    $0.graphChanged.store(true, ordering: .releasing)
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
    private static func openFailure(status: Int32, server: String) -> String {
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

    // MARK: The process thread

    /// One JACK cycle of `frameCount` frames. Thread: JACK's process thread.
    ///
    /// This outer function makes the C calls, all of them JACK's real-time API (port buffers,
    /// the cycle's times, MIDI events; the compiler cannot see into C, so it is not marked),
    /// and hands plain values to the checked real-time functions `begin`, `play` and `finish`,
    /// as `RenderThread` keeps `snd_pcm_writei` outside the mixer.
    private func process(frameCount: Int) {
        let began = monotonicNanoseconds()
        let frames = UInt32(frameCount)
        for channel in 0..<channelCount {
            channelBuffers[channel] = bk_jack_port_get_buffer(outputPorts[channel], frames)!.assumingMemoryBound(
                to: Float.self)
        }
        guard let mixer else {
            silence(frameCount: frameCount)
            return
        }
        var frameTime: UInt32 = 0, cycleMicroseconds: UInt64 = 0, nextMicroseconds: UInt64 = 0
        var periodMicroseconds: Float = 0
        let timed =
            bk_jack_get_cycle_times(client, &frameTime, &cycleMicroseconds, &nextMicroseconds, &periodMicroseconds) == 0
        if !timed { frameTime = bk_jack_last_frame_time(client) }
        // JACK's clock and ours read back to back, so the cycle's start maps without a gap.
        let jackNow = timed ? bk_jack_get_time() : 0
        let now = monotonicNanoseconds()
        let first = begin(
            frameCount: frameCount, frameTime: frameTime, began: now,
            sinceCycleStartMicroseconds: timed && jackNow >= cycleMicroseconds ? jackNow - cycleMicroseconds : 0,
            mixer: mixer)
        if let buffer = bk_jack_port_get_buffer(midiPort, frames) {
            var event = bk_jack_midi_event()
            let count = bk_jack_midi_get_event_count(buffer)
            var index: UInt32 = 0
            while index < count {
                if bk_jack_midi_event_get(&event, buffer, index) == 0, let bytes = event.buffer {
                    play(
                        bytes, count: event.size, offset: Int(event.time), first: first, frameCount: frameCount,
                        mixer: mixer)
                }
                index += 1
            }
        }
        finish(frameCount: frameCount, mixer: mixer)
        count(busy: monotonicNanoseconds() &- began)
    }

    /// Starts the cycle on the mixer: its first frame on the monotonic clock is the time the
    /// callback began less the time JACK says had passed since the cycle began (so a late
    /// wake-up does not move the line); a cycle that does not follow the last one restarts the
    /// line. Returns the cycle's first output frame. Thread: process. Real-time safe.
    @_noLocks
    private func begin(
        frameCount: Int, frameTime: UInt32, began: UInt64, sinceCycleStartMicroseconds: UInt64,
        mixer: Unmanaged<LiveMixer>
    ) -> Int64 {
        if hasCycled, frameTime != expectedFrameTime {
            // JACK2 also moves its frame counter on by one old period when the buffer size
            // changes, though no cycle was missed: that is not counted, but the line restarts.
            if frameCount == lastFrameCount { skippedCycles.wrappingAdd(1, ordering: .relaxed) }
            mixer._withUnsafeGuaranteedRef { $0.clock.restart() }
        }
        hasCycled = true
        lastFrameCount = frameCount
        expectedFrameTime = frameTime &+ UInt32(frameCount)
        let cycleStart = began &- sinceCycleStartMicroseconds &* 1_000
        return mixer._withUnsafeGuaranteedRef { $0.beginPeriod(frameCount: frameCount, nanoseconds: cycleStart) }
    }

    /// Plays one JACK MIDI event of `count` bytes at `bytes`, `offset` frames into the cycle
    /// that starts at output frame `first`, unless the engine does not play it or --channel
    /// filters it out. Thread: process. Real-time safe.
    @_noLocks
    private func play(
        _ bytes: UnsafePointer<UInt8>, count: Int, offset: Int, first: Int64, frameCount: Int,
        mixer: Unmanaged<LiveMixer>
    ) {
        let frame = first + Int64(min(max(offset, 0), frameCount - 1))
        // (two guards, not ||: the operator's autoclosure would retain self)
        guard let event = EngineEvent(midi: bytes, count: count, frame: frame) else {
            midiEventsIgnored.wrappingAdd(1, ordering: .relaxed)
            return
        }
        guard channelFilter.accepts(status: event.status) else {
            midiEventsIgnored.wrappingAdd(1, ordering: .relaxed)
            return
        }
        mixer._withUnsafeGuaranteedRef { $0.playNow(event) }
        midiEventsPlayed.wrappingAdd(1, ordering: .relaxed)
    }

    /// Renders the cycle into the output ports' buffers (and the recording). Thread: process.
    /// Real-time safe.
    @_noLocks
    private func finish(frameCount: Int, mixer: Unmanaged<LiveMixer>) {
        let buffers = UnsafePointer(channelBuffers)
        let recording = tap
        mixer._withUnsafeGuaranteedRef { $0.render(frameCount: frameCount, into: buffers, tap: recording) }
    }

    /// Zeroes the output ports' buffers (before `start`). Thread: process. Real-time safe.
    @_noLocks
    private func silence(frameCount: Int) {
        for channel in 0..<channelCount { channelBuffers[channel].update(repeating: 0, count: frameCount) }
    }

    /// Counts a cycle that took `busy` nanoseconds. Thread: process. Real-time safe.
    @_noLocks
    private func count(busy: UInt64) {
        cycles.wrappingAdd(1, ordering: .relaxed)
        busyNanoseconds.wrappingAdd(busy, ordering: .relaxed)
        if busy > longestCycleNanoseconds.load(ordering: .relaxed) {
            longestCycleNanoseconds.store(busy, ordering: .relaxed)
        }
    }

    /// The server changed its buffer size. The process callback takes any size, so this only
    /// keeps the figure (a change before the first cycle is the server's start, not counted).
    /// Thread: JACK's notification thread.
    private func bufferSizeChanged(to frames: Int) {
        let old = bufferFrames.exchange(frames, ordering: .relaxed)
        if old != frames, cycles.load(ordering: .relaxed) > 0 { bufferSizeChanges.wrappingAdd(1, ordering: .relaxed) }
    }

    /// A connection between ports `a` and `b` was made or removed. Thread: JACK's notification
    /// thread (a port lookup and atomics only).
    private func connectionChanged(_ a: bk_jack_port_id_t, _ b: bk_jack_port_id_t, connected: Bool) {
        if !connected, bk_jack_port_by_id(client, a) == midiPort || bk_jack_port_by_id(client, b) == midiPort {
            midiDisconnections.wrappingAdd(1, ordering: .releasing)
        }
        graphChanged.store(true, ordering: .releasing)
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

    private func close() {
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

    /// The full names of our ports (`bellkeys:out_1`, ..., `bellkeys:midi_in`).
    public var outputPortNames: [String] {
        (0..<configuration.channels).map { String(cString: bk_jack_port_name(outputPorts[$0])) }
    }
    public var midiPortName: String { String(cString: bk_jack_port_name(midiPort)) }

    /// The ports of `type` with all of `flags`, matching `pattern` (a regular expression, as
    /// `jack_get_ports` takes), in the server's order.
    private func ports(matching pattern: String?, type: String, flags: Int32) -> [String] {
        takeNames(bk_jack_get_ports(client, pattern, type, UInt(flags)))
    }

    /// Connects the output ports as `connection` asks. Returns a line for each connection made
    /// or refused. Thread: control, after `start`.
    public func connectOutputs(_ connection: JACKConnection) -> [String] {
        guard isActive else { return [] }
        let ours = outputPortNames
        var pairs: [(String, String)] = []
        var notes: [String] = []
        switch connection {
        case .none:
            return []
        case .physical:
            let physical = ports(
                matching: nil, type: BK_JACK_AUDIO_TYPE,
                flags: Int32(BK_JACK_PORT_IS_PHYSICAL | BK_JACK_PORT_IS_INPUT))
            if physical.isEmpty {
                return ["no physical playback ports: connect \(ours.joined(separator: ", ")) yourself"]
            }
            if ours.count == 1 {
                pairs = physical.prefix(2).map { (ours[0], $0) }
            } else {
                pairs = Array(zip(ours, physical))
                if ours.count > physical.count {
                    notes.append(
                        "\(ours[physical.count...].joined(separator: ", ")) left unconnected: the server has \(physical.count) playback port\(physical.count == 1 ? "" : "s")"
                    )
                }
            }
        case .ports(let names):
            var targets: [String] = []
            for name in names {
                if name.contains(":") {
                    targets.append(name)
                } else {
                    let found = ports(
                        matching: "^" + escapedPattern(name) + ":", type: BK_JACK_AUDIO_TYPE,
                        flags: Int32(BK_JACK_PORT_IS_INPUT))
                    if found.isEmpty {
                        notes.append("--jack-connect \(name): no client of that name has audio inputs (see `jack_lsp`)")
                    }
                    targets += found
                }
            }
            pairs = Array(zip(ours, targets))
        }
        return pairs.map { from, to in
            let status = bk_jack_connect(client, from, to)
            // EEXIST: already connected (a session manager did it).
            return status == 0 || status == EEXIST
                ? "\(from) → \(to)"
                : "cannot connect \(from) → \(to) (jack_connect: \(status); is there such a port? see `jack_lsp`)"
        } + notes
    }

    /// The physical MIDI capture ports (keyboards the server sees) not yet connected to
    /// `midi_in`; connecting them is the caller's choice. Thread: control.
    public func unconnectedPhysicalMIDIPorts() -> [String] {
        let connected = Set(midiConnections)
        return ports(
            matching: nil, type: BK_JACK_MIDI_TYPE, flags: Int32(BK_JACK_PORT_IS_PHYSICAL | BK_JACK_PORT_IS_OUTPUT)
        )
        .filter { !connected.contains($0) }
    }

    /// Connects `port` (a MIDI output) to `midi_in`. Returns nil, or why not. Thread: control.
    public func connectMIDI(from port: String) -> String? {
        let status = bk_jack_connect(client, port, midiPortName)
        return status == 0 || status == EEXIST ? nil : "jack_connect: \(status)"
    }

    /// The ports sending to `midi_in` now. Thread: control.
    public var midiConnections: [String] {
        takeNames(bk_jack_port_get_connections(midiPort))
    }

    /// Whether ports or connections changed since the last call. Thread: control.
    public func takeGraphChanged() -> Bool { graphChanged.exchange(false, ordering: .acquiring) }

    /// The server's DSP load (every client's), percent. Thread: control.
    public var serverLoadPercent: Double { Double(bk_jack_cpu_load(client)) }
}

/// The names in a NULL-terminated list libjack returned (`jack_get_ports`,
/// `jack_port_get_connections`), which it frees (`jack_free`); empty for NULL.
private func takeNames(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> [String] {
    guard let list else { return [] }
    defer { bk_jack_free(list) }
    var names: [String] = []
    var index = 0
    while let name = list[index] {
        names.append(String(cString: name))
        index += 1
    }
    return names
}

/// Loads libjack (once); returns nil, or the dynamic linker's words for why not.
private func loadJACK() -> String? {
    var error = [UInt8](repeating: 0, count: 512)
    let status = error.withUnsafeMutableBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { bk_jack_load($0.baseAddress, $0.count) }
    }
    guard status != 0 else { return nil }
    return String(decoding: error.prefix { $0 != 0 }, as: UTF8.self)
}

/// `text` with the characters a POSIX regular expression treats specially escaped.
private func escapedPattern(_ text: String) -> String {
    var out = ""
    for character in text {
        if "\\^$.|?*+()[]{}".contains(character) { out.append("\\") }
        out.append(character)
    }
    return out
}
