import BellkeysModel
import Synchronization

// The engine's control side: what the control thread (and a JACK callback, for `playNow`)
// calls to queue events, set the volume and ask what sounds. The state is the engine's four
// parts (Engine.swift: `table`, `midi`, `pool`, `mixer`) and its scalars.
extension Engine {

    /// Queues `event` for `render`; counts and drops it when the queue is full.
    /// Thread: control (the single producer; offline, the one thread that also renders).
    @_noLocks
    @discardableResult
    public func enqueue(_ event: EngineEvent) -> Bool {
        if events.push(event) { return true }
        droppedEvents.relaxedAdd(1)
        return false
    }

    /// Queues `event` ahead of time: unlike `enqueue`'s live events, which wait for no one,
    /// these may lie seconds ahead, and `render` merges both queues by frame. Events must be
    /// scheduled in frame order. Returns false when the queue is full (nothing is counted:
    /// the caller schedules again later). Thread: control.
    @_noLocks
    public func schedule(_ event: EngineEvent) -> Bool {
        scheduled.push(event)
    }

    /// Drops every event on `channel` (0...15; nil: every channel) scheduled so far that has
    /// not yet taken effect. Events scheduled after this call are kept, and so are other
    /// channels' events. Only the latest call counts. Thread: control.
    public func cancelScheduled(channel: Int?) {
        let code = channel.map { $0 & 15 } ?? 16
        scheduledCancellation.releasingStore(scheduled.pushedCount * 32 + code)
    }

    /// Queues `event`, which the render thread read for the period it is about to render (a
    /// JACK MIDI event at its frame offset), for `render`. Events must come in frame order.
    /// Counts and drops it when the queue is full. Thread: render (producer and consumer of
    /// this queue). Real-time safe.
    @_noLocks
    @discardableResult
    public func playNow(_ event: EngineEvent) -> Bool {
        if direct.push(event) { return true }
        droppedEvents.relaxedAdd(1)
        return false
    }

    /// Whether `note` (0...127) sounded at the end of the last render call. Thread: any.
    public func isSounding(note: Int) -> Bool {
        let bits = note < 64 ? soundingNotesLow.relaxedLoad() : soundingNotesHigh.relaxedLoad()
        return bits & (1 << UInt64(note & 63)) != 0
    }

    /// Applies a controller at once, with no ramp, to an engine no render thread has started
    /// (a reloaded map's, before `LiveMixer.install`): it starts with the channel's volume,
    /// expression, pan, reverb send and pedal as played so far, and any event it is given after
    /// that comes later. Thread: control, before the engine is handed over.
    public func presetController(channel: Int, controller: Int, value: Int) {
        controlChange(channel: channel & 15, controller: controller & 127, value: value & 127)
        mixer.channels[channel & 15].bus.advance(by: Int.max)
        mixer.channels[channel & 15].panLeft.advance(by: Int.max)
        mixer.channels[channel & 15].panRight.advance(by: Int.max)
        mixer.channels[channel & 15].send.advance(by: Int.max)
        settlePan(channel: channel & 15)
    }

    /// Sets the master volume; the render thread ramps to it. Thread: any.
    public func setMasterVolume(decibels: Double) {
        masterGainBits.relaxedStore(linearGain(decibels: decibels).bitPattern)
    }

    /// Voices sounding or fading right now. Thread: render (or after rendering stopped).
    public var activeVoiceCount: Int { activeCount }

    /// Whether the reverb (if any) holds no sound. Thread: render (or after rendering stopped).
    public var reverbIsQuiet: Bool { roomsAreIdle }

    /// Whether every room is empty (`Reverb.idle`; true for dry ones). Thread: render (or
    /// after rendering stopped). Real-time safe.
    var roomsAreIdle: Bool {
        @_noLocks get {
            for r in 0..<mixer.roomCount where mixer.roomIsWet[r] {
                if !mixer.rooms[r].idle { return false }
            }
            return true
        }
    }

    /// Gives set `set` (an index of the engine's sets) the room `settings` from `frame` on:
    /// its voices from then on ring in that room, those already sounding ring on in the room
    /// they started in (its tail rings out). Returns false, and changes nothing, when the
    /// engine holds no such room (`roomSettings`; `EngineConfiguration.roomsToChoose`) or the
    /// queue is full. Thread: control.
    @discardableResult
    public func chooseRoom(set: Int, _ settings: ReverbSettings, frame: Int64) -> Bool {
        guard let event = roomEvent(set: set, settings, frame: frame) else { return false }
        return enqueue(event)
    }

    /// The event `chooseRoom` queues (nil: no such set or room), to be queued later with
    /// `enqueue` or `schedule`. Thread: control.
    public func roomEvent(set: Int, _ settings: ReverbSettings, frame: Int64) -> EngineEvent? {
        let wanted = settings.preset == .off || settings.mix <= 0 ? ReverbSettings.off : settings
        guard set >= 0, set < table.setCount, set < Engine.maximumSetEvents,
            let room = roomSettings.firstIndex(of: wanted)
        else { return nil }
        // The set's low 8 bits in the first data byte, its high 4 over the room's in the second.
        return EngineEvent(
            frame: frame, status: Engine.roomStatus, data1: UInt8(set & 255), data2: UInt8(room | (set >> 8) << 4))
    }

    /// The events that put every set in `preset` (each at its own mix) from `frame` on, or nil
    /// when the engine does not hold one of those rooms. Thread: control.
    public func roomEvents(preset: ReverbPreset, frame: Int64) -> [EngineEvent]? {
        var made: [EngineEvent] = []
        for set in 0..<table.setCount {
            guard let event = roomEvent(set: set, ReverbSettings(preset: preset, mix: setMixes[set]), frame: frame)
            else { return nil }
            made.append(event)
        }
        return made
    }

    /// The set `channel` (0...15) plays: its starting set until a program change chooses
    /// another (as of the last render call). Thread: any.
    public func currentSet(channel: Int) -> Int {
        let word: UInt64
        switch (channel & 15) >> 2 {
        case 0: word = channelSets0.relaxedLoad()
        case 1: word = channelSets1.relaxedLoad()
        case 2: word = channelSets2.relaxedLoad()
        default: word = channelSets3.relaxedLoad()
        }
        return Int(word >> (16 * UInt64(channel & 3)) & 65_535)
    }

    /// Applies a program change at once to an engine no render thread has started (a reloaded
    /// map's: the channel's set as chosen so far). Thread: control, before the engine is handed over.
    public func presetProgram(channel: Int, program: Int) {
        programChange(channel: channel & 15, program: program & 127)
    }

    /// The room set `set` plays in now (an index of `roomSettings`). Thread: render (or after
    /// rendering stopped).
    public func room(ofSet set: Int) -> Int { mixer.setRooms[set] }

    /// Whether no voice sounds, no event waits and the room (if any) is quiet. Thread: render.
    /// Real-time safe.
    @_noLocks
    public func isSilent() -> Bool {
        if activeCount != 0 { return false }
        if !roomsAreIdle { return false }
        if let _ = events.peek() { return false }
        if let _ = scheduled.peek() { return false }
        if let _ = direct.peek() { return false }
        return true
    }

    /// Sets the frame that the next `render` starts at, so a new engine joins a running output
    /// (live map reload). Thread: render, before this engine's first `render`.
    @_noLocks
    public func start(atFrame frame: Int64) {
        currentFrame = frame
    }
}
