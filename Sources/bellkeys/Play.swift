import ArgumentParser
import BellkeysEngine
import BellkeysFormats
import BellkeysIO
import Glibc

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play the bells live from MIDI keyboards (the default command).",
        discussion: """
            bellkeys opens an ALSA sequencer client named `bellkeys` with one input port and \
            connects every keyboard it finds, and every keyboard plugged in later, unless \
            --connect names the ones to use. Notes start a constant --period after they arrive, \
            plus the device's buffer. Ctrl-C or SIGTERM fades out and exits; SIGHUP reloads the \
            map (a map with errors is reported and the old one keeps playing). The program ends \
            with status 1 when the sound device goes away, so a service manager can restart it.
            """)

    @OptionGroup var mapOptions: MapOptions

    @Option(help: ArgumentHelp("ALSA playback device (see `bellkeys list`).", valueName: "name"))
    var device = "default"

    @Option(help: ArgumentHelp("Output rate in Hz (default: the samples' rate, 48000 for the bundled bells).",
                               discussion: "A device that refuses it gets its nearest rate, and the bells are resampled to that once, at load.",
                               valueName: "hz"))
    var rate: Int?

    @Option(help: ArgumentHelp("Frames per period: how often the render thread writes to the device.",
                               discussion: "64 frames is 1.3 ms at 48 kHz. Raise it (128, 256) if `underruns` rises.",
                               valueName: "frames"))
    var period = 64

    @Option(help: ArgumentHelp("Periods in the device buffer; the buffer latency is period × periods.",
                               discussion: "2 × 64 frames is 2.7 ms at 48 kHz. Use 3 if the card underruns with 2.",
                               valueName: "n"))
    var periods = 2

    @Option(help: ArgumentHelp("Output channels; the mono bell mix is copied to each.", valueName: "n"))
    var channels = 2

    @Option(help: ArgumentHelp("Connect only this MIDI port (repeatable; turns auto-connect off): client:port, a client number, a client name, or part of a port name.",
                               discussion: "A port that is not there yet is connected when it appears.",
                               valueName: "port"))
    var connect: [String] = []

    @Option(help: ArgumentHelp("Play only MIDI channel n (1 to 16); default: all channels.", valueName: "n"))
    var channel: Int?

    @OptionGroup var voiceOptions: VoiceOptions

    @Option(help: ArgumentHelp("Real-time priority (SCHED_FIFO, 1 to 99) of the render thread.", valueName: "n"))
    var priority: Int32 = 70

    @Flag(name: .shortAndLong, help: "Print each MIDI event received, like aseqdump.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "No live status line (the start-up report and connection changes are still printed).")
    var quiet = false

    func validate() throws {
        try validateRate(rate)
        if !(16...8192).contains(period) { throw ValidationError("--period \(period) is out of range; use 16 to 8192 frames") }
        if !(2...32).contains(periods) { throw ValidationError("--periods \(periods) is out of range; use 2 to 32") }
        try validateChannels(channels)
        if let channel, !(1...16).contains(channel) {
            throw ValidationError("--channel \(channel) is out of range; MIDI channels are 1 to 16")
        }
        if !(1...99).contains(priority) { throw ValidationError("--priority \(priority) is out of range; use 1 to 99") }
    }

    func run() throws {
        try reporting {
            let session = try LiveSession(options: self)
            let status = session.run()
            Glibc.exit(status)
        }
    }
}

/// A running instrument: sequencer input on this (control) thread, rendering on its own.
///
/// The control thread is the only producer of engine events: it reads the sequencer, stamps
/// each event's arrival, tracks what each source holds, handles signals (through a signalfd,
/// so no work happens in a signal handler) and prints. Thread: control only.
final class LiveSession {
    let options: Play
    let console: Console
    var loaded: LoadedInstrument
    let sequencer: Sequencer
    let output: PCMOutput
    var engine: Engine
    /// The engine playing before the last reload, until its bells have rung out.
    var previousEngine: Engine?
    let mixer: LiveMixer
    let renderThread: RenderThread
    var stamper: FrameClock.Stamper
    var held = HeldNotes()
    /// Ports sending to us, with what they were called when they connected.
    var connected: [SequencerAddress: SequencerPort] = [:]
    /// Last value of CC7, CC11 and CC64 per channel, replayed into a reloaded map's engine.
    var controllers = [[UInt8]](repeating: [100, 127, 0], count: 16)
    /// Messages received from keyboards, played or not (before the --channel filter), for the
    /// closing report.
    var eventsReceived = 0
    let signals: SignalListener

    init(options: Play) throws {
        self.options = options
        console = Console(statusLine: !options.quiet && isatty(1) == 1)
        var loaded = try options.mapOptions.load(sampleRate: options.rate)

        // Both devices are tried before giving up, so the message says everything missing.
        var problems: [String] = []
        var sequencer: Sequencer?, output: PCMOutput?
        do { sequencer = try Sequencer(name: "bellkeys") } catch { problems.append(error.description) }
        do {
            output = try PCMOutput(device: options.device, sampleRate: loaded.sampleRate, channels: options.channels,
                                   periodFrames: options.period, periods: options.periods)
        } catch { problems.append(error.description) }
        guard let sequencer, let output else {
            throw Failure(problems.joined(separator: "\n") + """

                bellkeys plays live with an ALSA sequencer (MIDI in) and a sound device (audio out); \
                this machine lacks \(sequencer == nil && output == nil ? "both" : sequencer == nil ? "the sequencer" : "the sound device").
                What works without them: `bellkeys render FILE.mid -o out.wav` renders a MIDI file \
                with the same bells, and `bellkeys check` checks a map.
                """)
        }
        self.sequencer = sequencer
        self.output = output
        let granted = output.configuration
        var notes: [String] = []
        if granted.sampleRate != loaded.sampleRate {
            notes.append("\(granted.device) refuses \(loaded.sampleRate) Hz: bells resampled to \(granted.sampleRate) Hz at load")
            loaded = try options.mapOptions.load(sampleRate: granted.sampleRate)
        }
        self.loaded = loaded

        engine = options.voiceOptions.makeEngine(loaded)
        mixer = LiveMixer(engine: engine, channels: granted.channels, format: granted.format,
                          maximumPeriodFrames: granted.periodFrames)
        renderThread = RenderThread(mixer: mixer, output: output)
        stamper = FrameClock.Stamper(sampleRate: granted.sampleRate, periodFrames: granted.periodFrames)

        // SIGINT, SIGTERM and SIGHUP arrive through a descriptor polled with the sequencer. They
        // are blocked before the render thread starts, so it inherits the mask and never sees them.
        signals = SignalListener()

        let lockError = lockMemory()
        let scheduling = renderThread.start(priority: options.priority)

        let map = loaded.map
        let lowest = map.keys.map(\.note).min() ?? 0, highest = map.keys.map(\.note).max() ?? 0
        console.line("bellkeys: \(map.keys.count) bells (\(noteName(lowest))..\(noteName(highest))) from \(loaded.mapPath), "
                     + "loaded in \(secondsText(loaded.loadSeconds * 1000, digits: 1)) ms")
        for note in notes { console.line("  " + note) }
        console.line("  output \(granted.device): \(granted.sampleRate) Hz, \(granted.channels) ch, \(granted.format.rawValue), "
                     + "period \(granted.periodFrames) frames × \(granted.periods) = buffer \(granted.bufferFrames) frames "
                     + "(\(secondsText(granted.bufferMilliseconds, digits: 2)) ms)")
        switch scheduling {
        case .realTime(let priority):
            console.line("  render thread: real-time (SCHED_FIFO, priority \(priority))")
        case .normal(let code):
            console.line("  notice: render thread at normal priority: real-time scheduling was refused (\(String(cString: strerror(code)))).\n"
                         + "    fix: add yourself to the audio group with an rtprio limit (Debian: `sudo usermod -aG audio $USER` and a line "
                         + "`@audio - rtprio 95` in /etc/security/limits.d/audio.conf), then log in again")
        }
        if let lockError {
            console.line("  notice: sample memory not locked (\(String(cString: strerror(lockError)))); it may be paged out.\n"
                         + "    fix: raise the memlock limit (`@audio - memlock unlimited` in /etc/security/limits.d/audio.conf)")
        } else {
            console.line("  memory locked (\(loaded.bank.byteCount / 1024) KiB of samples)")
        }
        var input = "  MIDI input: port \(sequencer.address) \"bellkeys\", "
            + (options.connect.isEmpty ? "connecting every keyboard, now and when plugged in"
                                       : "connecting " + options.connect.map { "'\($0)'" }.joined(separator: ", "))
        if let channel = options.channel { input += ", channel \(channel) only" }
        console.line(input)
        for port in sequencer.ports() where wanted(port) { connect(port) }
        for pattern in options.connect where !connected.values.contains(where: { $0.matches(pattern) }) {
            console.line("  waiting for '\(pattern)' to appear")
        }
    }

    /// Whether bellkeys should connect to `port` by itself.
    func wanted(_ port: SequencerPort) -> Bool {
        guard port.address.client != sequencer.client, port.sendsMIDI else { return false }
        if options.connect.isEmpty { return port.isAutoConnectable }
        return options.connect.contains { port.matches($0) }
    }

    func connect(_ port: SequencerPort) {
        guard connected[port.address] == nil else { return }
        do {
            try sequencer.connect(from: port.address)
            noteConnected(port)
        } catch {
            console.line("cannot connect \(port.description): \(error.message)")
        }
    }

    func noteConnected(_ port: SequencerPort) {
        guard connected[port.address] == nil else { return }
        connected[port.address] = port
        console.line("connected \(port.description)")
    }

    func noteDisconnected(_ address: SequencerAddress, why: String) {
        guard let port = connected.removeValue(forKey: address) else { return }
        let released = held.release(source: address.key)
        for message in released { send(status: message.status, data1: message.data1, data2: message.data2) }
        let notes = released.filter { $0.status & 0xF0 == 0x80 }.count
        console.line("disconnected \(port.description): \(why)" + (notes > 0 ? "; released \(notes) held note\(notes == 1 ? "" : "s")" : ""))
    }

    /// Queues a channel message for the engine, at the frame for now.
    func send(status: UInt8, data1: UInt8, data2: UInt8, arrival: UInt64 = monotonicNanoseconds()) {
        let frame = stamper.frame(arrivalNanoseconds: arrival, clock: mixer.clock.read())
        let event = EngineEvent(frame: frame, status: status, data1: data1, data2: data2)
        engine.enqueue(event)
        // Bells of the map before a reload still hear their note-offs and pedal.
        if let previousEngine, status & 0xF0 != 0x90 { previousEngine.enqueue(event) }
    }

    /// The poll loop. Returns the exit status.
    func run() -> Int32 {
        var descriptors = sequencer.pollDescriptors()
        descriptors.append(pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0))
        var nextStatus = 0.0
        while true {
            _ = poll(&descriptors, nfds_t(descriptors.count), 50)
            // Everything waiting is read and stamped first, so that slow handling of one event
            // (a new port's name lookup) never delays the stamps of the notes behind it.
            var arrived: [(SequencerEvent, UInt64)] = []
            while let event = sequencer.read() { arrived.append((event, monotonicNanoseconds())) }
            for (event, arrival) in arrived { handle(event, arrival: arrival) }
            if let retired = mixer.takeRetired(), retired === previousEngine { previousEngine = nil }
            while let signal = signals.next() {
                if signal == SIGHUP { reload() } else { return shutDown(signal: signal) }
            }
            if renderThread.failed {
                let code = renderThread.failureCode.load(ordering: .acquiring)
                console.line("bellkeys: error: the sound device \(output.configuration.device) failed: \(alsaMessage(code)) "
                             + "(unplugged?); stopping.\n    A service manager (see README: systemd) restarts bellkeys.")
                renderThread.stop()
                return 1
            }
            let now = monotonicSeconds()
            if now >= nextStatus {
                nextStatus = now + 0.25
                console.status("♪ voices \(engine.voiceCount.load(ordering: .relaxed) + (previousEngine?.voiceCount.load(ordering: .relaxed) ?? 0))"
                               + " · underruns \(output.underruns.load(ordering: .relaxed))"
                               + " · ports \(connected.count)"
                               + (connected.isEmpty ? " (waiting for a keyboard)" : ": " + connected.values.sorted { $0.address < $1.address }.map(\.portName).joined(separator: ", ")))
            }
        }
    }

    func handle(_ event: SequencerEvent, arrival: UInt64) {
        switch event {
        case .midi(let source, let status, let data1, let data2):
            eventsReceived += 1
            if options.verbose { console.line(describeEvent(source: source, status: status, data1: data1, data2: data2)) }
            if let channel = options.channel, Int(status & 0x0F) != channel - 1 { return }
            held.track(source: source.key, status: status, data1: data1, data2: data2)
            if status & 0xF0 == 0xB0, let index = [7, 11, 64].firstIndex(of: Int(data1)) {
                controllers[Int(status & 0x0F)][index] = data2
            }
            send(status: status, data1: data1, data2: data2, arrival: arrival)
        case .portStarted(let address):
            if let port = sequencer.port(at: address), wanted(port) { connect(port) }
        case .portExited(let address):
            noteDisconnected(address, why: "port gone")
        case .clientExited(let client):
            for address in connected.keys where address.client == client { noteDisconnected(address, why: "client gone") }
        case .subscribed(let sender, let destination):
            // Our own subscription to System Announce (client 0) is not a keyboard.
            guard destination == sequencer.address, sender.client != 0, connected[sender] == nil else { return }
            noteConnected(sequencer.port(at: sender)
                          ?? SequencerPort(address: sender, clientName: "?", portName: "\(sender)"))
        case .unsubscribed(let sender, let destination):
            if destination == sequencer.address { noteDisconnected(sender, why: "connection removed") }
        case .other(let source, let type):
            if source.client != 0 { eventsReceived += 1 }
            if options.verbose, source.client != 0 { console.line(String(pad("\(source)", 7)) + "sequencer event type \(type)") }
        }
    }

    /// SIGHUP: loads the map again; on success the new bells take over at the next period and
    /// the old ones ring out. On failure the old map keeps playing.
    func reload() {
        guard previousEngine == nil, !mixer.installPending else {
            console.line("reload: the previous reload's bells are still ringing; try again in a few seconds")
            return
        }
        let fresh: LoadedInstrument
        do {
            fresh = try loadInstrument(mapPath: loaded.mapPath, sampleRate: output.configuration.sampleRate)
        } catch {
            console.line("reload: \(loaded.mapPath) has errors; still playing the map loaded before.\n\(error.description)")
            return
        }
        let newEngine = options.voiceOptions.makeEngine(fresh)
        _ = lockMemory()
        guard mixer.install(newEngine) else { return }
        previousEngine = engine
        engine = newEngine
        loaded = fresh
        for channel in 0..<16 {
            for (index, controller) in [7, 11, 64].enumerated() where controllers[channel][index] != [100, 127, 0][index] {
                send(status: 0xB0 | UInt8(channel), data1: UInt8(controller), data2: controllers[channel][index])
            }
        }
        console.line("reloaded \(fresh.mapPath): \(fresh.map.keys.count) bells, loaded in \(secondsText(fresh.loadSeconds * 1000, digits: 1)) ms")
    }

    /// SIGINT/SIGTERM: silence every bell with the engine's short fade, let it play out, close.
    func shutDown(signal: Int32) -> Int32 {
        // CC120 all-sound-off on every channel (send() gives it to a ringing-out engine too).
        for channel in 0..<16 { send(status: 0xB0 | UInt8(channel), data1: 120, data2: 0) }
        // The fade is 5 ms; the buffer a few more. Wait for both, at most 200 ms.
        let deadline = monotonicSeconds() + 0.2
        let fadeDone = { self.engine.voiceCount.load(ordering: .relaxed) == 0 && (self.previousEngine?.voiceCount.load(ordering: .relaxed) ?? 0) == 0 }
        while !fadeDone(), !renderThread.failed, monotonicSeconds() < deadline { usleep(2_000) }
        usleep(useconds_t(min(output.configuration.bufferMilliseconds * 1000 + 5000, 100_000)))
        renderThread.stop()
        output.stop()
        console.finish()
        // Counters of the engine playing now (a reload starts them again).
        let e = engine
        console.line("bellkeys: stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM")); underruns: \(output.underruns.load(ordering: .relaxed))"
                     + "; MIDI messages: \(eventsReceived), input overflows \(sequencer.inputOverflows)"
                     + ", dropped (queue full) \(e.droppedEvents.load(ordering: .relaxed))"
                     + "; voices: peak \(e.peakVoiceCount.load(ordering: .relaxed)), stolen \(e.stolenVoices.load(ordering: .relaxed))")
        return 0
    }
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }

/// One event as `aseqdump` shows it: source, event, channel (0-based, as aseqdump) and data.
func describeEvent(source: SequencerAddress, status: UInt8, data1: UInt8, data2: UInt8) -> String {
    let channel = Int(status & 0x0F)
    let text: String
    switch status & 0xF0 {
    case 0x90: text = pad("Note on", 24) + "\(channel), note \(data1), velocity \(data2)"
    case 0x80: text = pad("Note off", 24) + "\(channel), note \(data1), velocity \(data2)"
    case 0xB0: text = pad("Control change", 24) + "\(channel), controller \(data1), value \(data2)"
    default: text = pad("Status \(status)", 24) + "\(channel), \(data1), \(data2)"
    }
    return pad("\(source)", 7) + text
}

/// Standard output with an optional one-line live status kept below everything printed.
/// Thread: control.
final class Console {
    let statusLine: Bool
    private var shown = false

    init(statusLine: Bool) { self.statusLine = statusLine }

    /// Prints a line above the status line.
    func line(_ text: String) {
        write((shown ? "\r\u{1B}[K" : "") + text + "\n")
        shown = false
    }

    /// Replaces the status line (on a terminal only).
    func status(_ text: String) {
        guard statusLine else { return }
        write("\r\u{1B}[K" + text)
        shown = true
    }

    func finish() {
        if shown { write("\r\u{1B}[K") }
        shown = false
    }

    private func write(_ text: String) {
        var copy = text
        copy.withUTF8 { bytes in
            var done = 0
            while done < bytes.count {
                let n = Glibc.write(1, bytes.baseAddress! + done, bytes.count - done)
                if n <= 0 { return }
                done += n
            }
        }
    }
}
