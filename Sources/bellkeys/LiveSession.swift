import BellkeysEngine
import BellkeysFormats
import BellkeysIO
import BellkeysTerminal
import Glibc

/// A running instrument: input on this (control) thread, rendering on its own.
///
/// The control thread is the only producer of engine events. It reads the sequencer and the
/// computer keyboard, stamps each event's arrival, tracks what each source holds, records and
/// schedules the phrase loop and the demo tune, handles signals (through a signalfd, so no
/// work happens in a signal handler), draws the screen and prints. Thread: control only.
final class LiveSession {
    let settings: LiveSettings
    let console: Console
    var loaded: LoadedInstrument
    /// MIDI input; nil when the machine has no sequencer and the computer keyboard or a
    /// tune plays instead.
    let sequencer: Sequencer?
    let output: PCMOutput
    var engine: Engine
    /// The engine playing before the last reload, until its bells have rung out.
    var previousEngine: Engine?
    let mixer: LiveMixer
    let renderThread: RenderThread
    let recorder: Recorder?
    var stamper: FrameClock.Stamper
    var held = HeldNotes()
    /// Ports sending to us, with what they were called when they connected.
    var connected: [SequencerAddress: SequencerPort] = [:]
    /// The controllers replayed into a reloaded map's engine (CC7, CC11, CC64), and their values
    /// in a fresh engine.
    static let replayedControllers: [UInt8] = [7, 11, 64]
    static let controllerDefaults: [UInt8] = [100, 127, 0]
    /// Last value of each replayed controller per channel.
    var controllers = [[UInt8]](repeating: LiveSession.controllerDefaults, count: 16)
    /// Messages received from keyboards, played or not (before the --channel filter), for the
    /// closing report.
    var eventsReceived = 0
    let signals: SignalListener
    /// Master volume now (the map's or --volume, moved by the volume keys).
    var masterDecibels: Double

    // The computer keyboard and the screen (nil without a terminal, or with --no-ui).
    let terminal: Terminal?
    var parser = TerminalInputParser()
    var keyboard = TerminalKeyboard()
    /// When the kitty keyboard query was sent; the answer (or its absence) decides the mode.
    var keyboardQuery: Double?
    /// Since when a partial escape sequence has waited for the rest.
    var pendingSince: Double?
    /// The MIDI channel the computer keyboard plays on (--channel, else 1).
    let keyboardChannel: UInt8

    var looper = PhraseLooper()
    /// The tune's events at their output frames, once it has started, and the next to schedule.
    var tune: [EngineEvent] = []
    var tuneNext = 0
    var tuneEndFrame: Int64 = 0
    /// How far ahead of the live stamps the loop and the tune are scheduled.
    let lookaheadFrames: Int64

    init(settings: LiveSettings) throws {
        self.settings = settings
        let options = settings.output
        let wantsUI = !settings.session.noUI && Terminal.isInteractive
        console = Console(live: !settings.session.quiet && isatty(1) == 1)
        var loaded = try settings.map.load(sampleRate: options.rate)

        // Both devices are tried before giving up, so the message says everything missing.
        var sequencerProblem: String?, outputProblem: String?
        var sequencer: Sequencer?, output: PCMOutput?
        do { sequencer = try Sequencer(name: "bellkeys") } catch { sequencerProblem = error.description }
        do {
            output = try PCMOutput(device: options.device, sampleRate: loaded.sampleRate, channels: options.channels,
                                   periodFrames: options.period, periods: options.periods)
        } catch { outputProblem = error.description }
        // Without MIDI input the computer keyboard or the tune still plays.
        let needsSequencer = !wantsUI && settings.tune == nil
        guard let output, sequencer != nil || !needsSequencer else {
            let problems = [needsSequencer ? sequencerProblem : nil, outputProblem].compactMap { $0 }
            let lacking = sequencer == nil && needsSequencer ? (output == nil ? "both" : "the sequencer") : "the sound device"
            let needs = needsSequencer ? "an ALSA sequencer (MIDI in) and a sound device (audio out)" : "a sound device"
            throw Failure(problems.joined(separator: "\n") + """

                bellkeys plays live with \(needs); this machine lacks \(lacking).
                What works without: `bellkeys render FILE.mid -o out.wav` renders a MIDI file \
                with the same bells, `bellkeys demo -o demo.wav` renders the demo tune, and \
                `bellkeys check` checks a map.
                """)
        }
        self.sequencer = sequencer
        self.output = output
        let granted = output.configuration
        var notes: [String] = []
        if let sequencerProblem { notes.append("no MIDI input: " + sequencerProblem.replacingFirstLine()) }
        if granted.sampleRate != loaded.sampleRate {
            notes.append("\(granted.device) refuses \(loaded.sampleRate) Hz: bells resampled to \(granted.sampleRate) Hz at load")
            loaded = try settings.map.load(sampleRate: granted.sampleRate)
        }
        self.loaded = loaded

        if let path = settings.session.record {
            do {
                recorder = try Recorder(path: path, sampleRate: granted.sampleRate, channels: granted.channels,
                                        format: granted.format)
            } catch {
                throw Failure(error.description)
            }
        } else {
            recorder = nil
        }

        engine = settings.voices.makeEngine(loaded)
        masterDecibels = settings.voices.volume ?? loaded.instrument.masterVolumeDecibels
        mixer = LiveMixer(engine: engine, channels: granted.channels, format: granted.format,
                          maximumPeriodFrames: granted.periodFrames)
        renderThread = RenderThread(mixer: mixer, output: output)
        renderThread.recorder = recorder
        stamper = FrameClock.Stamper(sampleRate: granted.sampleRate, periodFrames: granted.periodFrames)
        lookaheadFrames = Int64(granted.sampleRate / 2)
        keyboardChannel = UInt8((settings.channel ?? 1) - 1)

        // SIGINT, SIGTERM and SIGHUP arrive through a descriptor polled with the sequencer. They
        // are blocked before the render thread starts, so it inherits the mask and never sees them.
        signals = SignalListener()

        let lockError = lockMemory()
        recorder?.start()
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
        if let recorder { console.line("  recording to \(recorder.path) (\(granted.format.rawValue), as played)") }
        if let sequencer {
            var input = "  MIDI input: port \(sequencer.address) \"bellkeys\", "
                + (settings.connect.isEmpty ? "connecting every keyboard, now and when plugged in"
                                            : "connecting " + settings.connect.map { "'\($0)'" }.joined(separator: ", "))
            if let channel = settings.channel { input += ", channel \(channel) only" }
            input += sequencer.queue.map { "; events stamped on delivery (queue \($0))" }
                ?? "; events stamped when read (no sequencer queue free)"
            console.line(input)
        }

        var terminal: Terminal?
        if wantsUI {
            do {
                terminal = try Terminal()
                keyboardQuery = monotonicSeconds()
            } catch {
                console.line("  notice: no keyboard UI (\(error))")
            }
        }
        self.terminal = terminal
        if let terminal {
            console.columns = terminal.columns
            console.line("  computer keyboard: a w s e d f t g y h u j k play C4..C5 (see the keys below)")
        }
        if let sequencer {
            for port in sequencer.ports() where wanted(port) { connect(port) }
            for pattern in settings.connect where !connected.values.contains(where: { $0.matches(pattern) }) {
                console.line("  waiting for '\(pattern)' to appear")
            }
        }
    }

    /// Whether bellkeys should connect to `port` by itself.
    func wanted(_ port: SequencerPort) -> Bool {
        guard let sequencer, port.address.client != sequencer.client, port.sendsMIDI else { return false }
        if settings.connect.isEmpty { return port.isAutoConnectable }
        return settings.connect.contains { port.matches($0) }
    }

    func connect(_ port: SequencerPort) {
        guard let sequencer, connected[port.address] == nil else { return }
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
        for message in released { play(status: message.status, data1: message.data1, data2: message.data2) }
        let notes = released.filter { $0.status & 0xF0 == 0x80 }.count
        console.line("disconnected \(port.description): \(why)" + (notes > 0 ? "; released \(notes) held note\(notes == 1 ? "" : "s")" : ""))
    }

    /// The output frame for an event arriving at `arrival`.
    func frame(arrival: UInt64 = monotonicNanoseconds()) -> Int64 {
        stamper.frame(arrivalNanoseconds: arrival, clock: mixer.clock.read())
    }

    /// Queues a channel message for the engine, at the frame for now; returns it as queued.
    @discardableResult
    func send(status: UInt8, data1: UInt8, data2: UInt8, arrival: UInt64 = monotonicNanoseconds()) -> EngineEvent {
        let event = EngineEvent(frame: frame(arrival: arrival), status: status, data1: data1, data2: data2)
        engine.enqueue(event)
        // Bells of the map before a reload still hear their note-offs and pedal.
        if let previousEngine, status & 0xF0 != 0x90 { previousEngine.enqueue(event) }
        return event
    }

    /// Plays a message from any source (MIDI keyboard, computer keyboard): remembered for a
    /// reload, recorded into a phrase loop being recorded, and queued.
    func play(status: UInt8, data1: UInt8, data2: UInt8, arrival: UInt64 = monotonicNanoseconds()) {
        if status & 0xF0 == 0xB0, let index = Self.replayedControllers.firstIndex(of: data1) {
            controllers[Int(status & 0x0F)][index] = data2
        }
        looper.record(send(status: status, data1: data1, data2: data2, arrival: arrival))
    }

    /// The poll loop. Returns the exit status.
    func run() -> Int32 {
        var descriptors = sequencer?.pollDescriptors() ?? []
        descriptors.append(pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0))
        if let terminal { descriptors.append(pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0)) }
        if let tune = settings.tune { start(tune) }
        var nextStatus = 0.0
        while true {
            // A lone ESC waits 30 ms for the rest of a sequence; otherwise up to 50 ms.
            _ = poll(&descriptors, nfds_t(descriptors.count), parser.hasPending ? 30 : 50)
            // Everything waiting is read first, so that slow handling of one event (a new port's
            // name lookup) never delays the stamps of the notes behind it. The stamps are the
            // kernel's delivery times when the sequencer gives them (see Sequencer.read).
            sequencer?.remeasure()
            var arrived: [(SequencerEvent, UInt64)] = []
            while let received = sequencer?.read() { arrived.append(received) }
            for (event, arrival) in arrived { handle(event, arrival: arrival) }
            if let terminal, let reason = readKeys(terminal, ready: descriptors[descriptors.count - 1].revents != 0) {
                return shutDown(reason)
            }
            scheduleAhead()
            if let retired = mixer.takeRetired(), retired === previousEngine { previousEngine = nil }
            while let signal = signals.next() {
                if signal == SIGHUP { reload() } else { return shutDown(signal == SIGINT ? "SIGINT" : "SIGTERM") }
            }
            if renderThread.failed {
                let code = renderThread.failureCode.load(ordering: .acquiring)
                renderThread.stop()
                finishScreen()
                console.line("bellkeys: error: the sound device \(output.configuration.device) failed: \(alsaMessage(code)) "
                             + "(unplugged?); stopping.\n    A service manager (see README: systemd) restarts bellkeys.")
                finishRecording()
                return 1
            }
            if settings.tune != nil, tuneNext == tune.count, (mixer.clock.read()?.frame ?? 0) > tuneEndFrame,
               engine.voiceCount.load(ordering: .relaxed) == 0, previousEngine == nil {
                return shutDown("the tune has rung out")
            }
            let now = monotonicSeconds()
            if now >= nextStatus {
                nextStatus = now + (terminal == nil ? 0.25 : 0.04)
                console.status(statusLines())
            }
        }
    }

    /// The status area: the piano and its lines with the keyboard UI, else one line.
    func statusLines() -> [String] {
        let voices = engine.voiceCount.load(ordering: .relaxed) + (previousEngine?.voiceCount.load(ordering: .relaxed) ?? 0)
        let ports = connected.isEmpty ? (sequencer == nil ? "no MIDI input" : "waiting for a keyboard")
                                      : connected.values.sorted { $0.address < $1.address }.map(\.portName).joined(separator: ", ")
        let underruns = output.underruns.load(ordering: .relaxed)
        guard terminal != nil else {
            return ["♪ voices \(voices) · underruns \(underruns) · ports \(connected.count)"
                    + (connected.isEmpty ? " (waiting for a keyboard)" : ": " + ports)]
        }
        let sounding = (60...72).filter { note in engine.isSounding(note: note) || previousEngine?.isSounding(note: note) == true }
        var lines = PianoView.lines { sounding.contains(60 + $0) }
        lines.append("  sounding: " + (sounding.isEmpty ? "-" : sounding.map { noteName($0) }.joined(separator: " ")))
        lines.append("  volume \(decibelsText(masterDecibels)) (↑/↓) · voices \(voices) · pedal \(keyboard.pedalDown ? "down" : "up") (space)"
                     + " · underruns \(underruns)")
        lines.append("  loop: " + loopText() + " · x damps all · Esc quits")
        lines.append("  MIDI: \(ports) · " + (keyboard.reportsReleases ? "key releases on: damped keys stop on release"
                                                                            : "no key releases: bells ring out"))
        return lines
    }

    func loopText() -> String {
        let rate = Double(output.configuration.sampleRate)
        switch looper.state {
        case .empty:
            return "off (Enter records)"
        case .recording(let start):
            let seconds = Double(max(0, frame() - start)) / rate
            return "recording \(secondsText(seconds, digits: 1)) s, \(looper.noteCount) notes (Enter closes)"
        case .looping(_, let length):
            return "playing \(secondsText(Double(length) / rate, digits: 2)) s, \(looper.noteCount) notes (Backspace clears)"
        }
    }

    /// Reads the computer keyboard, if `ready` (poll saw input or a hang-up), and acts on it.
    /// Returns a reason to quit, if one came.
    func readKeys(_ terminal: Terminal, ready: Bool) -> String? {
        let now = monotonicSeconds()
        var inputs: [TerminalInput] = []
        if ready {
            guard let bytes = terminal.read() else { return "the terminal closed" }
            inputs = parser.feed(bytes)
            if parser.hasPending, pendingSince == nil { pendingSince = now }
        } else if let since = pendingSince, now - since >= 0.025 {
            // Nothing followed an ESC for 25 ms: it was the Esc key.
            inputs = parser.flush()
        }
        if !parser.hasPending { pendingSince = nil }
        for input in inputs {
            switch input {
            case .kittyKeyboardFlags:
                if keyboardQuery != nil {
                    terminal.enableKittyKeyboard()
                    keyboard.reportsReleases = true
                    keyboardQuery = nil
                }
            case .deviceAttributes:
                keyboardQuery = nil
            case .key(let key, let action):
                for command in keyboard.handle(key, action, seconds: now) {
                    if let reason = perform(command) { return reason }
                }
            }
        }
        return nil
    }

    /// Carries out one computer-keyboard command. Returns a reason to quit, if it is one.
    func perform(_ command: KeyboardCommand) -> String? {
        let channel = keyboardChannel
        switch command {
        case .noteOn(let note): play(status: 0x90 | channel, data1: UInt8(note), data2: 100)
        case .noteOff(let note): play(status: 0x80 | channel, data1: UInt8(note), data2: 64)
        case .pedal(let down): play(status: 0xB0 | channel, data1: 64, data2: down ? 127 : 0)
        case .damp:
            for channel in 0..<16 { send(status: 0xB0 | UInt8(channel), data1: 123, data2: 0) }
        case .volume(let step):
            masterDecibels = min(MapFile.decibelRange.upperBound, max(MapFile.decibelRange.lowerBound, masterDecibels + step))
            engine.setMasterVolume(decibels: masterDecibels)
            previousEngine?.setMasterVolume(decibels: masterDecibels)
        case .loop:
            let now = frame()
            switch looper.toggle(atFrame: now) {
            case .started: console.line("loop: recording (Enter closes the loop)")
            case .closed(let length, let notes):
                console.line("loop: \(notes) notes, repeating every \(secondsText(Double(length) / Double(output.configuration.sampleRate), digits: 3)) s"
                             + " (\(length) frames)" + (looper.overflowed > 0 ? "; \(looper.overflowed) events past the first \(looper.capacity) were not kept" : ""))
                scheduleAhead()
            case .discarded: console.line("loop: nothing to repeat (no note, or under a quarter second); not kept")
            case .busy: console.line("loop: a loop is playing; Backspace clears it first")
            }
        case .clearLoop:
            guard looper.state != .empty else { return nil }
            looper.clear()
            cancelLoop(engine)
            if let previousEngine { cancelLoop(previousEngine) }
            console.line("loop: cleared")
        case .quit(let key):
            return key
        }
        return nil
    }

    /// Stops the loop's repeats in `engine`: what is scheduled, and its held notes and pedal.
    func cancelLoop(_ engine: Engine) {
        let channel = UInt8(looper.channel)
        engine.cancelScheduled(channel: looper.channel)
        let now = frame()
        engine.enqueue(EngineEvent(frame: now, status: 0xB0 | channel, data1: 64, data2: 0))
        engine.enqueue(EngineEvent(frame: now, status: 0xB0 | channel, data1: 123, data2: 0))
    }

    /// Starts `tune` a fifth of a second from now.
    func start(_ tune: MIDIFile) {
        let schedule = tune.scheduled(sampleRate: output.configuration.sampleRate,
                                      startFrame: frame() + Int64(output.configuration.sampleRate / 5))
        self.tune = schedule.events
        tuneEndFrame = schedule.endFrame
        tuneNext = 0
        scheduleAhead()
    }

    /// Hands the engine the loop's and the tune's events of the next half second, merged in
    /// frame order (the scheduled queue must stay in order).
    func scheduleAhead() {
        let horizon = frame() + lookaheadFrames
        while true {
            let fromTune = tuneNext < tune.count && tune[tuneNext].frame <= horizon ? tune[tuneNext] : nil
            let fromLoop = looper.peek(through: horizon)
            if let event = fromTune, fromLoop == nil || event.frame <= fromLoop!.frame {
                guard engine.schedule(event) else { return }
                tuneNext += 1
            } else if let event = fromLoop {
                guard engine.schedule(event) else { return }
                looper.advance()
            } else {
                return
            }
        }
    }

    func handle(_ event: SequencerEvent, arrival: UInt64) {
        guard let sequencer else { return }
        switch event {
        case .midi(let source, let status, let data1, let data2):
            eventsReceived += 1
            if settings.verbose { console.line(describeEvent(source: source, status: status, data1: data1, data2: data2)) }
            if let channel = settings.channel, Int(status & 0x0F) != channel - 1 { return }
            held.track(source: source.key, status: status, data1: data1, data2: data2)
            play(status: status, data1: data1, data2: data2, arrival: arrival)
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
            if settings.verbose, source.client != 0 { console.line(String(pad("\(source)", 7)) + "sequencer event type \(type)") }
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
        let newEngine = settings.voices.makeEngine(fresh)
        // The volume keys' setting outlives the reload.
        if terminal != nil { newEngine.setMasterVolume(decibels: masterDecibels) }
        _ = lockMemory()
        guard mixer.install(newEngine) else { return }
        previousEngine = engine
        engine = newEngine
        loaded = fresh
        for channel in 0..<16 {
            for (index, controller) in Self.replayedControllers.enumerated()
            where controllers[channel][index] != Self.controllerDefaults[index] {
                send(status: 0xB0 | UInt8(channel), data1: controller, data2: controllers[channel][index])
            }
        }
        console.line("reloaded \(fresh.mapPath): \(fresh.map.keys.count) bells, loaded in \(secondsText(fresh.loadSeconds * 1000, digits: 1)) ms")
    }

    /// Erases the status area and gives the terminal back as it was.
    func finishScreen() {
        console.finish()
        terminal?.restore()
    }

    /// Closes the recording and says what it holds.
    func finishRecording() {
        guard let recorder else { return }
        let (frames, dropped, failure) = recorder.finish()
        var text = "recorded \(recorder.path): \(secondsText(Double(frames) / Double(output.configuration.sampleRate), digits: 3)) s, \(frames) frames"
        if dropped > 0 { text += "; \(dropped) frames lost (the disk was too slow)" }
        if let failure { text += "; writing stopped early: \(failure)" }
        console.line(text)
    }

    /// Quitting (a signal, a quit key, the terminal gone, the tune's end): silence every bell
    /// with the engine's short fade, let it play out, close.
    func shutDown(_ reason: String) -> Int32 {
        // Nothing planned may start after this: the loop's and the tune's next notes go.
        engine.cancelScheduled(channel: nil)
        previousEngine?.cancelScheduled(channel: nil)
        // CC120 all-sound-off on every channel (send() gives it to a ringing-out engine too).
        for channel in 0..<16 { send(status: 0xB0 | UInt8(channel), data1: 120, data2: 0) }
        // The fade is 5 ms; the buffer a few more. Wait for both, at most 200 ms.
        let deadline = monotonicSeconds() + 0.2
        let fadeDone = { self.engine.voiceCount.load(ordering: .relaxed) == 0 && (self.previousEngine?.voiceCount.load(ordering: .relaxed) ?? 0) == 0 }
        while !fadeDone(), !renderThread.failed, monotonicSeconds() < deadline { usleep(2_000) }
        usleep(useconds_t(min(output.configuration.bufferMilliseconds * 1000 + 5000, 100_000)))
        renderThread.stop()
        output.stop()
        finishScreen()
        finishRecording()
        // Counters of the engine playing now (a reload starts them again).
        let e = engine
        console.line("bellkeys: stopped (\(reason)); underruns: \(output.underruns.load(ordering: .relaxed))"
                     + "; MIDI messages: \(eventsReceived), input overflows \(sequencer?.inputOverflows ?? 0)"
                     + ", dropped (queue full) \(e.droppedEvents.load(ordering: .relaxed))"
                     + "; voices: peak \(e.peakVoiceCount.load(ordering: .relaxed)), stolen \(e.stolenVoices.load(ordering: .relaxed))"
                     + "; clock line resets \(mixer.clock.slips.load(ordering: .relaxed))"
                     + (sequencer?.readLag.milliseconds.map {
                        "; MIDI read after delivery: mean \(secondsText($0.mean)) ms, max \(secondsText($0.maximum)) ms" } ?? ""))
        return 0
    }
}

extension String {
    /// The first line only (an error's message without its fix).
    func replacingFirstLine() -> String { String(split(separator: "\n").first ?? "") }
}
