import BellkeysEngine
import BellkeysModel

/// What every live input plays through: a MIDI keyboard, the computer keyboard, a tune. It
/// stamps each message's arrival onto the output's frame clock, tracks what each source holds
/// down, remembers the controllers a reloaded map must hear again, records and repeats the phrase
/// loop, schedules a tune, and hands every event to the engine now playing (and note-offs and
/// controllers to the engine of the map before a reload, until its bells have rung out).
///
/// It owns no device and no thread: the caller passes arrival times (`MonotonicInstant`),
/// and a driver runs the `mixer`'s periods. So it is tested against a real `Engine` and
/// `LiveMixer` with made-up times.
///
/// Thread: control, for every member. It is the engines' only event producer.
public final class LivePlayer {
    /// The render thread's side: what the output driver renders each period.
    public let mixer: LiveMixer
    /// The engine playing now.
    public private(set) var engine: Engine
    /// The engine of the map before the last reload, until its bells have rung out.
    public private(set) var previousEngine: Engine?
    public var sampleRate: Int { mixer.sampleRate }
    /// Master volume now, in dB (the map's or --volume, then the volume keys').
    public private(set) var masterDecibels: Double
    /// The phrase loop (its state, for the status line).
    public private(set) var looper = PhraseLooper()
    /// How far ahead of the live stamps the loop and the tune are handed to the engine.
    public let lookaheadFrames: Int64
    /// The room the bells ring in, as last chosen (`chooseRoom`, `install`): the map's,
    /// --reverb's, `r`'s or the teacher's; while the sets of a map ring in rooms of their own,
    /// the one the engine was built with.
    public internal(set) var room: ReverbPreset
    /// Who carries out what the inputs ask beyond playing (`ask`): the live session.
    public weak var session: (any SessionRequestHandler)?

    private var stamper: FrameClock.Stamper
    private var held = HeldNotes()
    /// The sources whose notes are transposed (MIDI inputs), whose releases are too.
    private var transposedSources: Set<Int> = []
    /// The last value of each replayed controller per channel (nil: not played, so where the
    /// engine starts it: a SoundFont's channel starts CC91 at 0, a map's at 127).
    private var controllers = [[UInt8?]](
        repeating: LivePlayer.replayedControllers.map { _ in nil as UInt8? }, count: 16)
    /// The last program change per channel (nil: none), which a reloaded map's engine hears again.
    private var programs = [(program: UInt8, bank: (high: UInt8, low: UInt8))?](repeating: nil, count: 16)
    /// The set each channel plays, as the program changes sent so far choose it (the engine's
    /// rule, `Engine.set(channel:program:bankHigh:bankLow:)`, read here with no wait for the render thread): a loop
    /// starts in its first note's channel's set.
    private var channelSets: [Int]
    /// The tune's events at their output frames, once started, and the next to schedule.
    private var tune: [EngineEvent] = []
    private var tuneNext = 0
    private var tuneEndFrame: Int64 = 0
    private var hasTune = false
    /// The latest frame of an event queued for the engines (-1: none yet), and the mixer's
    /// `completedRenders` when the last one was queued.
    private var lastQueuedFrame: Int64 = -1
    private var rendersAtLastQueue = 0

    /// - Parameters:
    ///   - periodFrames: the output's period; a live event is placed one period after the frame
    ///     of its arrival (see `FrameClock`).
    ///   - masterDecibels: the engine's master volume as built.
    ///   - room: the room the engine was built with.
    public init(
        mixer: LiveMixer, engine: Engine, periodFrames: Int, masterDecibels: Double, room: ReverbPreset = .off
    ) {
        self.mixer = mixer
        self.engine = engine
        self.masterDecibels = masterDecibels
        self.room = room
        stamper = FrameClock.Stamper(sampleRate: mixer.sampleRate, periodFrames: periodFrames)
        lookaheadFrames = Int64(mixer.sampleRate / 2)
        channelSets = (0..<16).map { engine.currentSet(channel: $0) }
    }

    // MARK: Playing

    /// The output frame for an event arriving at `arrival`: one
    /// period (the one under way) after the frame the output's clock line gives for it.
    public func frame(arrival: MonotonicInstant) -> Int64 {
        let period = mixer.periodFrames.load(ordering: .relaxed)
        if period > 0 { stamper.latencyFrames = Int64(period) }
        return stamper.frame(arrival: arrival, clock: mixer.clock.read())
    }

    /// Plays `message`, which arrived at `arrival`, from `source` (a number naming the sender,
    /// whose held keys are released if it goes away; nil for a source that cannot go away). It
    /// is remembered for a reload, recorded into a loop being recorded, and queued.
    /// `transposable`: the source is a MIDI input, whose notes the engine transposes
    /// (`EngineEvent.transposable`); the computer keyboard and the phones are not.
    public func play(_ message: MIDIMessage, from source: Int?, arrival: MonotonicInstant, transposable: Bool = false) {
        let message = message.masked
        if let source {
            held.track(source: source, message)
            if transposable { transposedSources.insert(source) }
        }
        remember(message)
        let event = send(message, arrival: arrival, transposable: transposable)
        looper.record(event)
        followSet(event)
    }

    /// A program change: the set it chooses on its channel, kept in `channelSets` and recorded
    /// into a loop being recorded. (After `remember`: the bank select it is read under.)
    private func followSet(_ event: EngineEvent) {
        guard case .programChange(let channel, let program)? = MIDIMessage(event) else { return }
        let ch = Int(channel), bank = bankSelect(channel: ch)
        guard
            let set = engine.set(channel: ch, program: Int(program), bankHigh: Int(bank.high), bankLow: Int(bank.low))
        else { return }
        channelSets[ch] = set
        looper.recordSet(set, channel: ch, atFrame: event.frame)
    }

    /// Takes the events the render thread has played itself since the last call (JACK MIDI, at
    /// their frames: `LiveMixer.playNow`) and keeps them as `play` keeps a message: held by
    /// `source`, remembered for a reload, recorded into a loop being recorded. They are not
    /// queued again. Calls `each` with every one, in order (for --verbose and counting).
    public func notePlayedNow(source: Int? = LivePlayer.renderThreadSource, each: (EngineEvent) -> Void = { _ in }) {
        while let event = mixer.played.peek() {
            mixer.played.pop()
            if let message = MIDIMessage(event) {
                if let source {
                    held.track(source: source, message)
                    if event.transposable { transposedSources.insert(source) }
                }
                remember(message)
            }
            // Played into the old map's engine in the cycles between `install` and the new
            // engine's start: the new one hears it too, at its first frame (a pedal lifted then
            // must not stay down on the new map).
            if previousEngine != nil, !event.strikes {
                let start = mixer.engineStartFrame.load(ordering: .acquiring)
                if start < 0 || event.frame < start {
                    var atStart = event
                    atStart.frame = max(start, 0)
                    engine.enqueue(atStart)
                }
            }
            looper.record(event)
            followSet(event)
            each(event)
        }
    }

    /// The held-notes source of what the render thread plays itself (JACK's `midi_in`, which
    /// merges every sender).
    public static let renderThreadSource = -2

    /// Keeps the last value of the controllers a reloaded map hears again.
    private func remember(_ message: MIDIMessage) {
        if case .controlChange(let channel, let number, let value) = message,
            let index = Self.replayedControllers.firstIndex(of: number)
        {
            controllers[Int(channel)][index] = value
        }
        // Reset all controllers: those it resets (the mod wheel, expression, the pedal) start
        // where the new engine starts them (volume, pan, the send and the bank stay).
        if case .controlChange(let channel, 121, _) = message {
            for (index, number) in Self.replayedControllers.enumerated() where [1, 11, 64].contains(number) {
                controllers[Int(channel)][index] = nil
            }
        }
        // A program change with the bank select it was read under (a later bank select alone
        // chooses nothing).
        if case .programChange(let channel, let program) = message {
            programs[Int(channel & 15)] = (program, bankSelect(channel: Int(channel & 15)))
        }
    }

    /// `channel`'s bank select as played so far (CC0, CC32).
    private func bankSelect(channel: Int) -> (high: UInt8, low: UInt8) {
        let index = { (number: UInt8) in Self.replayedControllers.firstIndex(of: number)! }
        return (controllers[channel][index(0)] ?? 0, controllers[channel][index(32)] ?? 0)
    }

    /// `source` went away (a keyboard unplugged): lets go of the keys and pedals it held, unless
    /// another source holds them too. Returns how many notes it released.
    @discardableResult
    public func release(source: Int, arrival: MonotonicInstant) -> Int {
        let released = held.release(source: source)
        let transposable = transposedSources.remove(source) != nil
        for message in released { play(message, from: nil, arrival: arrival, transposable: transposable) }
        return released.count(where: \.isNoteOff)
    }

    /// Damps the bells of every damped key: all-notes-off (CC123) on every channel, which the
    /// map's ringing keys ignore.
    public func dampAll(arrival: MonotonicInstant) {
        for channel in 0..<16 {
            send(
                .controlChange(channel: UInt8(channel), controller: MIDIMessage.Controller.allNotesOff, value: 0),
                arrival: arrival)
        }
    }

    /// Sets the master volume of every engine, clamped to `range`.
    public func setMasterVolume(decibels: Double, range: ClosedRange<Double>) {
        masterDecibels = min(range.upperBound, max(range.lowerBound, decibels))
        forEachEngine { $0.setMasterVolume(decibels: masterDecibels) }
    }

    /// The engine playing now, then the previous map's while its bells ring out.
    private func forEachEngine(_ body: (Engine) -> Void) {
        body(engine)
        if let previousEngine { body(previousEngine) }
    }

    /// Queues `message` for the engine at the frame for `arrival`, and returns it as queued.
    /// Bells of the map before a reload hear it too, unless it strikes (`EngineEvent.strikes`).
    @discardableResult
    private func send(_ message: MIDIMessage, arrival: MonotonicInstant, transposable: Bool = false) -> EngineEvent {
        let event = message.event(atFrame: frame(arrival: arrival), transposable: transposable)
        queued(event.frame)
        engine.enqueue(event)
        if let previousEngine, !event.strikes { previousEngine.enqueue(event) }
        return event
    }

    // MARK: The loop and the tune

    /// Starts recording a phrase loop, or closes the loop: its repeats start at once.
    public func toggleLoop(arrival: MonotonicInstant) -> PhraseLooper.Outcome {
        let outcome = looper.toggle(atFrame: frame(arrival: arrival), sets: channelSets)
        if case .closed = outcome { scheduleAhead(arrival: arrival) }
        return outcome
    }

    /// Stops the loop: what is scheduled goes, and its held notes and pedal are let go.
    /// Returns false when there was no loop.
    @discardableResult
    public func clearLoop(arrival: MonotonicInstant) -> Bool {
        guard looper.state != .empty else { return false }
        let channel = UInt8(looper.channel)
        looper.clear()
        let now = frame(arrival: arrival)
        queued(now)
        forEachEngine { engine in
            engine.cancelScheduled(channel: Int(channel))
            engine.enqueue(
                MIDIMessage.controlChange(channel: channel, controller: MIDIMessage.Controller.sustain, value: 0)
                    .event(atFrame: now))
            engine.enqueue(
                MIDIMessage.controlChange(channel: channel, controller: MIDIMessage.Controller.allNotesOff, value: 0)
                    .event(atFrame: now))
        }
        return true
    }

    /// Plays a tune: `events` at frames counted from its start (in order), `endFrame` its end;
    /// it starts a fifth of a second after `arrival`, at the next frame of the engine's block
    /// grid, so the tune is mixed in the same blocks as `render --block N` mixes it, and the
    /// device receives the render's samples exactly.
    public func startTune(_ events: [EngineEvent], endFrame: Int64, arrival: MonotonicInstant) {
        let block = Int64(engine.configuration.maxBlockFrames)
        let start = (frame(arrival: arrival) + Int64(sampleRate / 5) + block - 1) / block * block
        tune = events.map {
            var event = $0
            event.frame += start
            return event
        }
        tuneEndFrame = endFrame + start
        tuneNext = 0
        hasTune = true
        scheduleAhead(arrival: arrival)
    }

    /// Whether a tune was started, all of it has played, and every bell has rung out.
    public var tuneHasRungOut: Bool {
        hasTune && tuneNext == tune.count && (mixer.clock.read()?.frame ?? 0) > tuneEndFrame && isSilent
            && previousEngine == nil
    }

    /// Work done each time the control thread wakes: hands the engine the loop's and the tune's
    /// events of the next `lookaheadFrames`, and lets go of an engine that has rung out.
    public func update(arrival: MonotonicInstant) {
        scheduleAhead(arrival: arrival)
        if let retired = mixer.takeRetired(), retired === previousEngine { previousEngine = nil }
    }

    /// The loop's and the tune's events up to the horizon, merged in frame order (the engine's
    /// scheduled queue must stay in order).
    private func scheduleAhead(arrival: MonotonicInstant) {
        let horizon = frame(arrival: arrival) + lookaheadFrames
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

    // MARK: Reload and shutdown

    /// Whether `install` would be refused now: the last reload's engine has not started yet, or
    /// the bells of the map before it are still ringing.
    public var isReloading: Bool { previousEngine != nil || mixer.installPending }

    /// Hands `newEngine` (a reloaded map's) to the render thread, which starts it at its next
    /// period while the old bells ring out. The new engine starts with the controllers played
    /// so far (CC7, CC11, the pedal); with `masterDecibels` it takes that master volume (the
    /// volume keys' setting), else it keeps its own; `room` is the room it was built with (nil:
    /// the room as it was). Returns false, changing nothing, while `isReloading`. (`arrival` is
    /// kept for callers; nothing is stamped.)
    public func install(
        _ newEngine: Engine, masterDecibels: Double?, room: ReverbPreset? = nil, arrival: MonotonicInstant
    )
        -> Bool
    {
        guard !isReloading else { return false }
        // What the render thread played while the map loaded counts: its controllers are
        // among those the new engine starts with.
        notePlayedNow()
        if let masterDecibels {
            newEngine.setMasterVolume(decibels: masterDecibels)
            self.masterDecibels = masterDecibels
        }
        // The new engine starts with the controllers as played so far, set before it runs (a
        // stamped event could land after one the render thread plays in its first cycles).
        for channel in 0..<16 {
            for (index, number) in Self.replayedControllers.enumerated() {
                guard let value = controllers[channel][index] else { continue }
                newEngine.presetController(channel: channel, controller: Int(number), value: Int(value))
            }
            // The channel's set: its program under the bank select it was chosen with, then the
            // bank select as it stands now.
            if let chosen = programs[channel] {
                func presetBank(_ bank: (high: UInt8, low: UInt8)) {
                    newEngine.presetController(channel: channel, controller: 0, value: Int(bank.high))
                    newEngine.presetController(channel: channel, controller: 32, value: Int(bank.low))
                }
                presetBank(chosen.bank)
                newEngine.presetProgram(channel: channel, program: Int(chosen.program))
                presetBank(bankSelect(channel: channel))
            }
        }
        // A loop playing on: its sets found again by name in the new map (a set it lacks: the
        // loop channel's own), and its channel on the set it plays now.
        let old = engine, loop = looper.channel, starting = newEngine.currentSet(channel: loop)
        let remap = { (set: Int) -> Int in
            guard old.setNames.indices.contains(set), let found = newEngine.setNames.firstIndex(of: old.setNames[set])
            else { return starting }
            return found
        }
        if looper.state != .empty { newEngine.presetSet(channel: loop, set: remap(old.currentSet(channel: loop))) }
        guard mixer.install(newEngine) else { return false }
        looper.remapSets(remap)
        channelSets = (0..<16).map { newEngine.currentSet(channel: $0) }
        previousEngine = engine
        engine = newEngine
        if let room { self.room = room }
        return true
    }

    /// Quitting: nothing planned may start any more (nor anything the render thread reads
    /// itself, JACK MIDI), and every bell fades out (all-sound-off, CC120, on every channel: the
    /// engine's short fade). Wait for `isSilent` before stopping
    /// the output.
    public func silence(arrival: MonotonicInstant) {
        mixer.takesRenderThreadEvents.store(false, ordering: .relaxed)
        forEachEngine { $0.cancelScheduled(channel: nil) }
        for channel in 0..<16 {
            send(
                .controlChange(channel: UInt8(channel), controller: MIDIMessage.Controller.allSoundOff, value: 0),
                arrival: arrival)
        }
    }

    // MARK: What sounds

    /// Whether nothing will happen until an input plays: no bell sounds, no tune or loop is
    /// under way, no reload waits. The control thread may then sleep until an input wakes it.
    /// (What the engines report counts only once a render begun after the last event was
    /// queued has finished, and has passed the event's frame: the event was then taken and
    /// applied. The mixer's counters are read first; they are stored after the engines'.)
    public var isAtRest: Bool {
        let renders = mixer.completedRenders.load(ordering: .acquiring)
        let renderedThrough = mixer.renderedThroughFrame.load(ordering: .acquiring)
        guard !hasTune, looper.state == .empty, !isReloading else { return false }
        if lastQueuedFrame >= 0 {
            // One render may have been under way when the event was queued, and missed it.
            guard renders &- rendersAtLastQueue >= 2, renderedThrough > lastQueuedFrame else { return false }
        }
        return isSilent
    }

    /// Notes an event queued for the engines at `frame`.
    func queued(_ frame: Int64) {
        lastQueuedFrame = max(lastQueuedFrame, frame)
        rendersAtLastQueue = mixer.completedRenders.load(ordering: .relaxed)
    }
}
