import BellkeysEngine
import BellkeysModel

/// A phrase looper, like a loop pedal: `toggle` starts recording what is played, `toggle`
/// again closes the loop, and the phrase then repeats until `clear`.
///
/// It records notes (note-on, note-off, sustain pedal, and the set each program change chose:
/// `recordSet`), not audio: each event keeps its frame
/// offset from the start, and repeat k of an event recorded at offset o plays at exactly
/// `start + k × length + o`. Nothing accumulates, so the loop never drifts, and a repeat costs
/// what the same notes played live cost. Repeats play on their own MIDI channel
/// (`channel`), so the player's note-offs and pedal never cut the loop's bells, and the
/// loop's never cut the player's.
///
/// Thread: control. Repeats go to the engine through
/// `Engine.schedule`, a little ahead of time (`peek(through:)` and `advance`), merged there
/// with any other scheduled events in frame order.
public struct PhraseLooper: Sendable {
    public enum State: Equatable, Sendable {
        case empty
        case recording(startFrame: Int64)
        case looping(startFrame: Int64, lengthFrames: Int64)
    }

    /// What `toggle` did.
    public enum Outcome: Equatable, Sendable {
        case started
        /// The loop closed: it repeats every `lengthFrames`.
        case closed(lengthFrames: Int64, noteCount: Int)
        /// Closed with no note in it, or shorter than `minimumFrames`: back to empty.
        case discarded
        /// A loop is playing; `clear` it first.
        case busy
    }

    public private(set) var state = State.empty
    /// The MIDI channel (0...15) that repeats play on.
    public let channel: Int
    /// The most events a phrase holds; later ones are not recorded (`overflowed` counts them).
    public let capacity: Int
    /// The shortest loop kept, in frames.
    public let minimumFrames: Int64
    /// The phrase: frames are offsets from the start, in order.
    public private(set) var phrase: [EngineEvent] = []
    /// Events played while recording that did not fit.
    public private(set) var overflowed = 0
    /// Next event of `phrase` to schedule, and the repeat it belongs to (1 = first repeat).
    private var nextIndex = 0
    private var nextRepeat: Int64 = 1
    /// The set each channel played when recording started (`toggle(atFrame:sets:)`), and the
    /// channel of the first note recorded: each repeat starts in that channel's set.
    private var startSets: [Int] = []
    private var firstNoteChannel: Int?

    public init(channel: Int = 15, capacity: Int = 4_096, minimumFrames: Int64 = 12_000) {
        precondition((0...15).contains(channel) && capacity > 0)
        self.channel = channel
        self.capacity = capacity
        self.minimumFrames = minimumFrames
        phrase.reserveCapacity(capacity)
    }

    /// Notes recorded so far, or in the loop.
    public var noteCount: Int { phrase.count { MIDIMessage($0)?.isStrike == true } }

    /// Starts recording at `frame`, or closes the loop there. `sets`: the set each of the 16
    /// channels plays as recording starts (the player's); each repeat then starts in the set the
    /// phrase's first note was played in, whatever the loop's channel played before (and a set
    /// recorded in the phrase, `recordSet`, changes it at its frame, in every repeat).
    public mutating func toggle(atFrame frame: Int64, sets: [Int] = []) -> Outcome {
        switch state {
        case .empty:
            phrase.removeAll(keepingCapacity: true)
            overflowed = 0
            startSets = sets
            firstNoteChannel = nil
            state = .recording(startFrame: frame)
            return .started
        case .recording(let start):
            let length = frame - start
            let notes = noteCount
            guard notes > 0, length >= minimumFrames else {
                clear()
                return .discarded
            }
            // Notes still held, and the pedal still down, end with the phrase: each repeat
            // starts from the state the first one did. (A key is held per input kind: a MIDI
            // keyboard's transposed key is let go of transposed, 128 + key.)
            var down = Set<Int>(), pedal = false
            for event in phrase {
                let input = event.transposable ? 128 : 0
                switch MIDIMessage(event) {
                case .noteOn(_, let note, let velocity) where velocity > 0: down.insert(input + Int(note))
                case .noteOn(_, let note, _), .noteOff(_, let note, _): down.remove(input + Int(note))
                case .controlChange(_, MIDIMessage.Controller.sustain, let value): pedal = value >= 64
                case .controlChange, .pitchBend, .programChange, .keyPressure, .channelPressure, nil: break
                }
            }
            let loopChannel = UInt8(channel)
            // The sets: those the first note's channel chose, on the loop's channel, after the one
            // it played as recording started.
            phrase.removeAll { $0.status == Engine.setStatus && Int($0.data1 & 15) != firstNoteChannel }
            for k in phrase.indices where phrase[k].status == Engine.setStatus {
                phrase[k] = Engine.setEvent(frame: phrase[k].frame, channel: channel, set: phrase[k].chosenSet)
            }
            if let first = firstNoteChannel, startSets.indices.contains(first),
                (0..<Engine.maximumSetEvents).contains(startSets[first])
            {
                phrase.insert(Engine.setEvent(frame: 0, channel: channel, set: startSets[first]), at: 0)
            }
            for key in down.sorted() {
                phrase.append(
                    MIDIMessage.noteOff(channel: loopChannel, note: UInt8(key & 127), velocity: 0)
                        .event(atFrame: length, transposable: key >= 128))
            }
            if pedal {
                phrase.append(
                    MIDIMessage.controlChange(
                        channel: loopChannel, controller: MIDIMessage.Controller.sustain, value: 0
                    )
                    .event(atFrame: length))
            }
            state = .looping(startFrame: start, lengthFrames: length)
            nextIndex = 0
            nextRepeat = 1
            return .closed(lengthFrames: length, noteCount: notes)
        case .looping:
            return .busy
        }
    }

    /// Records `event` if a phrase is being recorded: note-ons, note-offs and the sustain
    /// pedal, from any channel; everything else is ignored.
    public mutating func record(_ event: EngineEvent) {
        guard case .recording(let start) = state else { return }
        let loopChannel = UInt8(channel)
        let onLoopChannel: MIDIMessage
        switch MIDIMessage(event) {
        case .noteOn(_, let note, let velocity):
            onLoopChannel = .noteOn(channel: loopChannel, note: note, velocity: velocity)
        case .noteOff(_, let note, let velocity):
            onLoopChannel = .noteOff(channel: loopChannel, note: note, velocity: velocity)
        case .controlChange(_, MIDIMessage.Controller.sustain, let value):
            onLoopChannel = .controlChange(
                channel: loopChannel, controller: MIDIMessage.Controller.sustain, value: value)
        default: return
        }
        if firstNoteChannel == nil, case .noteOn(let from, _, let velocity) = MIDIMessage(event), velocity > 0 {
            firstNoteChannel = Int(from)
        }
        insert(onLoopChannel.event(atFrame: max(0, event.frame - start), transposable: event.transposable))
    }

    /// Records that a program change on `channel` (0...15) chose set `set` at `frame` (the
    /// player works out the set, as the engine does: `Engine.set(channel:program:bankHigh:bankLow:)`). At the close
    /// only those of the channel the first note came from are kept: the loop follows that
    /// player's sets, not another keyboard's.
    public mutating func recordSet(_ set: Int, channel: Int, atFrame frame: Int64) {
        guard case .recording(let start) = state, (0..<Engine.maximumSetEvents).contains(set) else { return }
        insert(Engine.setEvent(frame: max(0, frame - start), channel: channel, set: set))
    }

    /// The phrase's sets after a reload: each through `map` (an index of the old map's sets to
    /// one of the new map's).
    public mutating func remapSets(_ map: (Int) -> Int) {
        for k in phrase.indices where phrase[k].status == Engine.setStatus {
            let set = max(0, min(Engine.maximumSetEvents - 1, map(phrase[k].chosenSet)))
            phrase[k] = Engine.setEvent(frame: phrase[k].frame, channel: Int(phrase[k].data1 & 15), set: set)
        }
    }

    /// Adds `recorded` to the phrase in frame order, or counts it when the phrase is full.
    private mutating func insert(_ recorded: EngineEvent) {
        guard phrase.count < capacity else {
            overflowed += 1
            return
        }
        // Inputs stamp differently (JACK MIDI at its frame, the sequencer a period after its
        // arrival), so events can come out of order: keep the phrase in frame order, as the
        // engine's scheduled queue needs (after equal frames, in arrival order).
        var index = phrase.count
        while index > 0, phrase[index - 1].frame > recorded.frame { index -= 1 }
        phrase.insert(recorded, at: index)
    }

    /// Stops the loop (or the recording) and forgets the phrase. The caller cancels what it
    /// already scheduled (`Engine.cancelScheduled(channel:)`).
    public mutating func clear() {
        state = .empty
        phrase.removeAll(keepingCapacity: true)
        nextIndex = 0
        nextRepeat = 1
    }

    /// The next repeat's event if it falls at or before `horizon`, without taking it.
    public func peek(through horizon: Int64) -> EngineEvent? {
        guard case .looping(let start, let length) = state, !phrase.isEmpty else { return nil }
        var event = phrase[nextIndex]
        event.frame += start + nextRepeat * length
        return event.frame <= horizon ? event : nil
    }

    /// Moves past the event `peek` returned.
    public mutating func advance() {
        nextIndex += 1
        if nextIndex == phrase.count {
            nextIndex = 0
            nextRepeat += 1
        }
    }
}
