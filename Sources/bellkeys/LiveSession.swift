import BellkeysAudio
import BellkeysClassroomServer
import BellkeysControl
import BellkeysEngine
import BellkeysFormats
import BellkeysLive
import BellkeysLoading
import BellkeysMIDI
import BellkeysModel
import BellkeysSystem
import BellkeysTerminal
import Glibc

/// A running instrument: the devices, the inputs, the screen and the poll loop around a
/// `LivePlayer`.
///
/// The control thread (this one) runs the poll loop (`LiveLoop`), which waits on every live
/// input and drains each in turn (they play through the player) and reads the signals (through
/// a signalfd, so no work happens in a signal handler: SIGHUP becomes `ask(.reload)`). The
/// session carries out what inputs ask of it through the player (a room, a set, a reload:
/// `carryOut`), watches the output, draws the screen and prints. What the messages do (stamps,
/// held notes, the loop, the tune) is the player's; which keyboards to connect is the
/// sequencer input's. Thread: control only.
final class LiveSession: LiveLoopDelegate, SessionRequestHandler {
    let settings: LiveSettings
    let console: Console
    var loaded: LoadedInstrument
    /// The sound output driver (`OutputDrivers`). The session never touches its real-time side,
    /// and what it prints of the driver the driver says.
    let output: any AudioOutput
    let player: LivePlayer
    var mixer: LiveMixer { player.mixer }
    let recorder: Recorder?
    let signals: SignalListener
    /// MIDI keyboards; nil when the machine has no sequencer and the computer keyboard or a
    /// tune plays instead.
    let midi: SequencerInput?
    /// The MIDI input the output driver brings with it (`OutputDrivers`), if any.
    let driverMIDI: (any LiveInput)?
    /// Whether the notice about notes outside the map's keys was given (once a session), and
    /// the programs (bank × 128 + program) no set has that were told of (each once).
    var toldOfUnmappedNotes = false
    var toldOfMissingPrograms: Set<Int> = []
    /// The room `r` or the teacher asked for, which the engine takes at once (or, when it holds
    /// no such room, a new engine as soon as the last change's bells have rung out); the room
    /// the bells ring in now is the player's (`room`).
    var wantedRoom = ReverbPreset.off
    /// Whether the sets of a map of several ring in rooms of their own (their maps' rooms, until
    /// `r` or --reverb puts them all in one): then `room` is only the first set's.
    var setsRoomsDiffer = false
    /// A room asked for (`r`, the teacher's page) not yet taken, though it may be `room`: the
    /// sets that ring in rooms of their own are all to go to it.
    var roomAsked = false
    /// The room chosen by --reverb or `r`, which a reloaded map's own does not replace.
    var roomOverride: ReverbPreset?
    /// A SIGHUP that came while the last change's bells were still ringing: done when they end.
    var reloadPending = false
    /// The computer keyboard and the piano picture (nil without a terminal, or with --no-ui).
    let keys: KeyboardInput?
    /// The instrument's keys as the picture draws them (set again on a reload).
    var picture: PianoPicture
    /// The classroom's phones (`--web`), and the server they come through.
    let web: WebInput?
    let classroomServer: WebServer?
    /// The follow-along's tunes (the demo, `--web-tune`'s), mapped again onto a reloaded map's sets.
    let classroomTunes: Tunes
    /// Every input, drained in this order on each pass of the poll loop.
    var inputs: [any LiveInput] { [midi as (any LiveInput)?, driverMIDI, keys, web].compactMap { $0 } }

    init(settings: LiveSettings) throws {
        self.settings = settings
        let wantsUI = !settings.session.noUI && Terminal.isInteractive
        console = Console(live: !settings.session.quiet && isatty(1) == 1) { writeAll(1, $0) }
        // SIGINT, SIGTERM and SIGHUP arrive through a descriptor polled with the inputs. They are
        // blocked before any other thread starts (a driver's library may start its own when opened,
        // the render thread comes later), so every thread inherits the mask and none sees them.
        signals = SignalListener()
        let devices = try Self.openDevices(settings, wantsUI: wantsUI)
        output = devices.output
        loaded = devices.loaded
        let granted = output.configuration
        recorder = try Self.openRecorder(settings.session.record, granted)

        let engine = settings.voices.makeEngine(loaded, notes: settings.notes, roomsToChoose: true)
        let mixer = LiveMixer(
            engine: engine, channels: granted.channels, format: granted.format,
            maximumPeriodFrames: output.maximumPeriodFrames)
        player = LivePlayer(
            mixer: mixer, engine: engine, periodFrames: granted.periodFrames,
            masterDecibels: settings.voices.volume ?? loaded.startingVolumeDecibels,
            room: settings.voices.reverb ?? loaded.instrument.reverb.preset)
        let console = console
        midi = devices.sequencer.map {
            SequencerInput(
                sequencer: $0, console: console, patterns: settings.connect,
                filter: settings.notes.filter, verbose: settings.verbose, clock: monotonicInstant)
        }
        // Keyboards come through the sequencer when it is there, else through the driver's own
        // MIDI input: never both, so no keyboard is connected twice.
        driverMIDI = devices.midiInput?(console, devices.sequencer == nil, settings.verbose)

        let lockError = lockMemory()
        recorder?.start()
        let scheduling = output.start(pulling: mixer, tap: recorder?.tap, priority: settings.output.realTimePriority)
        for line in Self.startupLines(
            loaded, transpose: engine.configuration.transpose, notes: devices.notes,
            output: output, scheduling: scheduling, lockError: lockError, recorder: recorder)
        {
            console.line(line)
        }
        for input in [midi, driverMIDI] { if let line = input?.startupLine { console.line(line) } }

        picture = PianoPicture(playable: loaded.playableRange, isMap: !loaded.isSFZ)
        keys = wantsUI ? Self.openKeyboard(settings, playable: loaded.playableRange, console: console) : nil
        if let classroom = settings.classroom, classroom.web {
            do {
                let started = try Self.startClassroom(
                    classroom, loaded: loaded, channel: UInt8((settings.notes.channel ?? 1) - 1),
                    console: console)
                web = started.input
                classroomServer = started.server
                classroomTunes = started.tunes
            } catch {
                output.stop()
                keys?.terminal.restore()
                throw error
            }
        } else {
            web = nil
            classroomServer = nil
            classroomTunes = []
        }
        roomOverride = settings.voices.reverb
        wantedRoom = room
        setsRoomsDiffer = roomOverride == nil && Set(loaded.sets.map(\.instrument.reverb.preset)).count > 1
        // What the inputs and signals ask beyond notes (a room, a set, a reload) comes here.
        player.session = self
        midi?.connectPresent()
        driverMIDI?.connectPresent()
    }

    /// Plays until asked to stop (or an input, the output or the tune ends it); returns the
    /// exit status.
    func run() -> Int32 {
        let loop = LiveLoop(
            inputs: inputs, player: player, output: output, signals: signals,
            statusSeconds: keys == nil ? 0.25 : 0.04, clock: monotonicInstant)
        if let tune = settings.tune {
            // (bellkeys' own tune: --transpose is for keyboards and the files a user brings)
            let schedule = tune.scheduled(sampleRate: output.configuration.sampleRate, transposable: false)
            player.startTune(
                settings.notes.filter.apply(schedule.events), endFrame: schedule.endFrame,
                arrival: monotonicInstant())
        }
        switch loop.run(delegate: self) {
        case .quit(let reason):
            return shutDown(reason)
        case .inputFailed(let reason, let message):
            // The sound still works: the bells fade out as on quitting, and the status says why.
            console.line(
                "bellkeys: error: \(message); stopping."
                    + "\n    A service manager (the systemd user unit: man bellkeys, FILES) restarts bellkeys.")
            return shutDown(reason, status: 1)
        case .outputFailed(let failure):
            return fail(failure)
        case .tuneRungOut:
            return shutDown("the tune has rung out")
        }
    }

    func loopDidPass() {
        if reloadPending, !player.isReloading {
            reloadPending = false
            reload()
        }
        takeWantedRoom()
    }

    var loopIsAtRest: Bool { !reloadPending && wantedRoom == room && !roomAsked }

    func loopOutputSaid(_ line: String) { console.line(line) }

    func loopStatusDue() {
        tellOfUnmappedNotes()
        tellOfMissingPrograms()
        console.status(statusLines())
    }

    /// SIGHUP: loads the map again; on success the new bells take over at the next period and
    /// the old ones ring out. On failure the old map keeps playing.
    func reload() {
        guard !player.isReloading else {
            if !reloadPending {
                console.line("reload: waiting for the bells of the last change to ring out")
                reloadPending = true
            }
            return
        }
        let fresh: LoadedInstrument
        do {
            fresh = try loadInstrument(
                path: loaded.path, sampleRate: output.configuration.sampleRate, preset: loaded.requestedPreset)
        } catch {
            console.line(
                "reload: \(loaded.path) has errors; still playing the map loaded before.\n\(error.description)")
            return
        }
        for warning in fresh.warnings { console.line(warning) }
        let newEngine = settings.voices.makeEngine(
            fresh, notes: settings.notes, room: roomOverride, roomsToChoose: true)
        // The volume keys' setting outlives the reload; the map's own room, unless --reverb or
        // `r` chose one.
        guard
            install(
                newEngine, masterDecibels: keys != nil ? player.masterDecibels : nil,
                room: roomOverride ?? fresh.instrument.reverb.preset)
        else { return }
        loaded = fresh
        reloadClassroom()
        picture = PianoPicture(playable: fresh.playableRange, isMap: !fresh.isSFZ)
        wantedRoom = room
        setsRoomsDiffer = roomOverride == nil && Set(fresh.sets.map(\.instrument.reverb.preset)).count > 1
        console.line(
            "reloaded \(fresh.path): \(fresh.contentsText), loaded in \(secondsText(fresh.loadSeconds * 1000, digits: 1)) ms"
        )
    }

    /// Hands `engine` to the player, as a reload or a room change does: the bells sounding ring
    /// out on the old one. Locks the new engine's memory first (its voices and queues; after a
    /// reload, its samples too); `room` is the room it was built with. False if a change is
    /// still under way.
    func install(_ engine: Engine, masterDecibels: Double?, room: ReverbPreset) -> Bool {
        _ = lockMemory()
        return player.install(engine, masterDecibels: masterDecibels, room: room, arrival: monotonicInstant())
    }

    /// Erases the status area and gives the terminal back as it was; closes the classroom.
    func finishScreen() {
        classroomServer?.stop()
        console.finish()
        keys?.terminal.restore()
    }

    /// Closes the recording and says what it holds.
    func finishRecording() {
        guard let recorder else { return }
        let (frames, dropped, failure) = recorder.finish()
        var text =
            "recorded \(recorder.path): \(secondsText(Double(frames) / Double(output.configuration.sampleRate), digits: 3)) s, \(frames) frames"
        if dropped > 0 { text += "; \(dropped) frames lost (the disk was too slow)" }
        if let failure { text += "; writing stopped early: \(failure)" }
        console.line(text)
    }

    /// A device failed: stop rendering, give the terminal back, close the recording, say why.
    /// Returns the exit status (1).
    func fail(_ what: String) -> Int32 {
        output.stop()
        finishScreen()
        console.line(
            "bellkeys: error: \(what); stopping.\n    A service manager (the systemd user unit: man bellkeys, FILES) restarts bellkeys."
        )
        finishRecording()
        return 1
    }

    /// Quitting (a signal, a quit key, the terminal gone, the tune's end, the MIDI input
    /// failing): silence every bell with the engine's short fade, let it play out, close.
    /// Returns `status`, the exit status.
    func shutDown(_ reason: String, status: Int32 = 0) -> Int32 {
        // Devices in the room at the end, before the classroom closes (which empties it).
        let devicesAtEnd = classroomServer?.joinedNow.load(ordering: .relaxed) ?? 0
        // Nothing planned may start after this; every bell fades (CC120).
        player.silence(arrival: monotonicInstant())
        // The fade is 5 ms; the buffer a few more. Wait for both, at most 200 ms.
        let deadline = monotonicSeconds() + 0.2
        while !player.isSilent, output.failure == nil, monotonicSeconds() < deadline { usleep(2_000) }
        usleep(useconds_t(min(output.configuration.bufferMilliseconds * 1000 + 5000, 100_000)))
        output.stop()
        finishScreen()
        finishRecording()
        // Counters of the engine playing now (a reload starts them again).
        let e = player.engine
        let outputCounts = output.closingText(mixer: mixer)
        console.line(
            "bellkeys: stopped (\(reason)); \(outputCounts)"
                + "; MIDI messages: \(midi?.eventsReceived ?? 0), input overflows \(midi?.sequencer.inputOverflows ?? 0)"
                + ", dropped (queue full) \(e.droppedEvents.load(ordering: .relaxed)), late \(e.lateEvents.load(ordering: .relaxed))"
                + "; voices: peak \(e.peakVoiceCount.load(ordering: .relaxed)), stolen \(e.stolenVoices.load(ordering: .relaxed))"
                + "; clock line resets \(mixer.clock.slips.load(ordering: .relaxed))"
                + (midi?.sequencer.readLag.milliseconds.map {
                    "; MIDI read after delivery: mean \(secondsText($0.mean)) ms, max \(secondsText($0.maximum)) ms"
                } ?? "")
                + classroomCounts(devicesAtEnd: devicesAtEnd))
        return status
    }

}

extension String {
    /// The first line only (an error's message without its fix).
    func replacingFirstLine() -> String { String(split(separator: "\n").first ?? "") }
}
