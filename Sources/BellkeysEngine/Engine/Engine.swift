import BellkeysModel
import Synchronization

/// The polyphonic bell mixer.
///
/// Voices are preallocated; `render` mixes them into mono `Float` frames, applying queued
/// events at their exact frames. Gain is staged as: sample × key gain × velocity curve (per
/// voice, constant while sounding) → channel bus × CC7 × CC11 × master (ramped over
/// `rampFrames`) → a zero-lookahead peak limiter at `limiterThreshold`, which only acts when
/// the sum of voices would pass it.
///
/// Threads: `render` and everything it calls: render. `enqueue`, `schedule`, `cancelScheduled`:
/// control (the single producer). `setMasterVolume` and the counters: any.
///
/// The render path is split by what it does: `EventMerge.swift` (the three queues merged by
/// frame, each event applied at its frame), `VoicePool.swift` (voices start, release, fade, are
/// stolen, end), `Controllers.swift` (note-off, pedal, CC7/CC11, all-notes-off),
/// `SegmentMix.swift` (voices into channel buses), `ChannelMix.swift` (buses into the output and
/// the rooms) and `Limiter.swift`; the control side is in `EngineControl.swift`. This file holds the state they share and builds it.
public final class Engine: @unchecked Sendable {
    public let configuration: EngineConfiguration
    /// Events to be applied by `render`; see `enqueue`.
    public let events: EventQueue
    /// Events planned ahead of time, in frame order; see `schedule`.
    public let scheduled: EventQueue
    /// Events the render thread itself read for the period it is rendering (JACK MIDI, with
    /// their frame offsets), in frame order; see `playNow`.
    let direct: EventQueue
    /// The last `cancelScheduled`: `scheduled.pushedCount` then, times 32, plus the channel
    /// (16: all). The render thread skips that channel's scheduled events pushed before it.
    let scheduledCancellation = Atomic<Int>(0)
    /// Keeps the sample memory that `keys` and voices point into alive.
    public let bank: SampleBank

    // Counters, written by the render thread (and `enqueue`), read anywhere.
    /// Events dropped because the queue was full.
    public let droppedEvents = Atomic<Int>(0)
    /// Events applied after their frame had passed (live input arriving late).
    public let lateEvents = Atomic<Int>(0)
    /// Voices stolen because polyphony was reached (each faded over `fadeSeconds`).
    public let stolenVoices = Atomic<Int>(0)
    /// Fading voices cut at once because every slot was busy (should stay 0).
    public let cutVoices = Atomic<Int>(0)
    /// Note-ons for notes that the map does not play.
    public let ignoredNotes = Atomic<Int>(0)
    /// Program changes for a program (and bank) no set of the map has, and the last of them
    /// (bank × 128 + program).
    public let missingPrograms = Atomic<Int>(0)
    public let lastMissingProgram = Atomic<Int>(0)
    /// The set each channel plays, a byte each (channels 0...7 in the low word, 8...15 in the
    /// high), written when a program change chooses one; read with `currentSet(channel:)`.
    let channelSetsLow = Atomic<UInt64>(0)
    let channelSetsHigh = Atomic<UInt64>(0)
    /// Frames in which the limiter reduced the gain.
    public let limitedFrames = Atomic<Int>(0)
    /// Output samples beyond ±1.0 (should stay 0: the limiter prevents it).
    public let clippedSamples = Atomic<Int>(0)
    /// Voices sounding after the last render call, and the most at once so far.
    public let voiceCount = Atomic<Int>(0)
    /// Whether the room (the reverb) holds no sound after the last render call (true without one).
    public let roomIsQuiet = Atomic<Bool>(true)
    public let peakVoiceCount = Atomic<Int>(0)
    /// Notes with a voice sounding after the last render call, one bit per MIDI note
    /// (0...63 in `soundingNotesLow`, 64...127 in `soundingNotesHigh`), whatever played them.
    public let soundingNotesLow = Atomic<UInt64>(0)
    public let soundingNotesHigh = Atomic<UInt64>(0)
    let masterGainBits: Atomic<UInt32>

    // Render-thread state. Allocated in init, never resized. Internal, not private, so the
    // render path's other files reach it; nothing outside the module can.
    /// The instrument as the render thread reads it: the regions, the sets, the tables derived
    /// from them. Built in init, never written after.
    let table: RegionTable
    /// The sets' names, in order (a reload finds a set again by its name). Thread: any.
    public let setNames: [String]
    /// Per set: the keyswitch in force (-1: none), which a key in its keyswitch range chooses.
    let keyswitches: UnsafeMutablePointer<Int>
    /// Per set: the room its next voices ring in (`rooms`), which a room chosen live changes.
    let setRooms: UnsafeMutablePointer<Int>
    /// Round robin: per region, the strikes of its keys so far (modulo its sequence length).
    let sequenceCounters: UnsafeMutablePointer<Int32>
    /// Every controller's last value per channel (128 c + n), for the regions' ranges.
    let controllerValues: UnsafeMutablePointer<UInt8>
    /// The velocity of each key held down (128 c + n; 0: up), for release samples, and how many
    /// keys each channel holds, for `first` and `legato` regions.
    let noteVelocities: UnsafeMutablePointer<UInt8>
    /// The set each key held down was struck in (128 c + n), whose release samples its note-off
    /// starts.
    let noteSets: UnsafeMutablePointer<UInt8>
    /// The semitones each key of a MIDI input (128 c + key) was moved by when it was struck
    /// (the transposition, or 0 for a keyswitch), which its note-off moves by too.
    let keyShifts: UnsafeMutablePointer<Int8>
    let heldKeyCounts: UnsafeMutablePointer<Int32>
    /// The random generator's state (SplitMix64, a fixed seed: renders are repeatable).
    var randomState: UInt64 = 0x6265_6C6C_6B65_7973
    /// The interpolation kernels (kept alive here; the render thread reads `table.kernelLevels`).
    let kernels: InterpolationKernels
    /// The pitched voices' read-out (two channels of a block).
    let pitchScratch: UnsafeMutablePointer<Float>
    /// A loop's seam copied out for the kernel loop (`seamWindow`): 16-bit frames, stereo at most.
    let seamScratch: UnsafeMutablePointer<Int16>
    /// The square law's gain for each value of CC7, CC11 and CC91.
    let controllerGains: UnsafeMutablePointer<Float>
    /// The pan law's left and right gains for each CC10 value (value v: 2v and 2v + 1).
    let panTable: UnsafeMutablePointer<Float>
    /// Channels whose CC10 pan is off the centre or still moving (bit c: channel c); their
    /// buses go out through `panLeft` and `panRight`.
    var pannedChannels: UInt16 = 0
    /// The rooms the bells ring in: one per room setting (`roomSettings`) the sets have, or may
    /// be given live (`chooseRoom`); each fed by the sends (CC91) of the voices that ring in it.
    /// A dry one (`roomIsWet` false) has no reverb to run. At most `maximumRooms`.
    let rooms: UnsafeMutablePointer<Reverb>
    let roomIsWet: UnsafeMutablePointer<Bool>
    let roomCount: Int
    public let roomSettings: [ReverbSettings]
    /// Each set's reverb mix as the engine was made (the default mix for a dry set): a room
    /// chosen live (`roomEvents`) keeps it.
    let setMixes: [Double]
    /// Whether any room is wet, and the lanes of the wet ones (bit c + 16 r).
    let hasReverb: Bool
    let wetLanes: UInt128
    /// The most rooms an engine holds (16 lanes each: 128 lanes, one bit each in a `UInt128`).
    public static let maximumRooms = InstrumentSets.maximumRooms
    /// Each room's input for a segment (room r: from `r × maxBlockFrames`).
    let sendBuses: UnsafeMutablePointer<Float>
    let voices: UnsafeMutablePointer<Voice>
    /// The pitched voices' own state, slot for slot with `voices`.
    let pitchedVoices: UnsafeMutablePointer<PitchedVoice>
    /// What idle voice slots point at.
    let silence: UnsafeMutablePointer<Int16>
    let active: UnsafeMutablePointer<Int32>
    var activeCount = 0
    /// Active voices per MIDI note, and the notes with any (kept as voices start and end).
    let noteVoiceCounts: UnsafeMutablePointer<Int32>
    var soundingLow: UInt64 = 0, soundingHigh: UInt64 = 0
    let free: UnsafeMutablePointer<Int32>
    var freeCount: Int
    var soundingCount = 0
    var nextSerial: UInt64 = 0
    /// The serial of the first voice the note-on being started may start: a choke spares the
    /// voices of its own note-on (as FluidSynth's exclusive class and sfizz's groups do).
    var noteOnSerial: UInt64 = 0
    let channels: UnsafeMutablePointer<ChannelState>
    /// A bus per lane (a channel in a room: lane c + 16 r) for its centred voices.
    let buses: UnsafeMutablePointer<Float>
    /// Per lane, a left and a right bus for its panned voices (lane l: 2l and 2l + 1).
    let sideBuses: UnsafeMutablePointer<Float>
    /// The right channel of a segment rendered for a mono output, before the downmix.
    let segmentRight: UnsafeMutablePointer<Float>
    var masterGain: Float
    var limiterGain: Float = 1
    let limiterRecovery: Float
    let fadeFrames: Int
    /// How many voices ahead of the one mixing the sample data is prefetched.
    let prefetchDistance = 8
    /// Whether the four-voice loop is the AVX2 build (`EngineConfiguration.wideMixing`).
    public let wideMixing: Bool
    /// `EngineConfiguration.skipsRest`.
    let skipsRest: Bool
    /// Whether every segment of the last `render` call was at rest (`isAtRest`): its output
    /// was all zeros, unmixed. Thread: render.
    public internal(set) var renderedOnlySilence = false
    /// Output frame that the next `render` call starts at.
    public internal(set) var currentFrame: Int64 = 0

    /// An engine for several sets, every one ready before the first note, each in its own room.
    /// The master volume is that of channel 1's starting set; the others' volumes against it
    /// are in their regions' gains. Thread: control, before rendering starts.
    /// - Precondition: every key's and region's `sampleIndex` is valid in `bank`.
    public init(bank: SampleBank, sets setList: InstrumentSets, configuration: EngineConfiguration) {
        let instrument = setList.sets[setList.startingSets[0]].instrument
        precondition(configuration.polyphony > 0 && configuration.maxBlockFrames > 0)
        self.configuration = configuration
        skipsRest = configuration.skipsRest
        #if arch(x86_64)
        wideMixing = configuration.wideMixing
        #else
        wideMixing = false
        #endif
        self.bank = bank
        events = EventQueue(capacity: configuration.eventCapacity)
        scheduled = EventQueue(capacity: configuration.scheduledCapacity)
        direct = EventQueue(capacity: configuration.eventCapacity)
        let rate = Double(configuration.sampleRate)

        let layout = RegionLayout(setList, bank: bank)
        kernels = InterpolationKernels(quality: configuration.interpolation, highestRatio: layout.highestRatio)
        table = RegionTable(
            setList, layout: layout, bank: bank, kernels: kernels, sampleRate: configuration.sampleRate)
        let setCount = table.setCount, storedRegions = max(table.regionCount, 1)
        setNames = setList.sets.map(\.name)
        keyswitches = .allocate(capacity: setCount)
        keyswitches.initialize(from: setList.sets.map { $0.instrument.defaultKeyswitch ?? -1 }, count: setCount)
        sequenceCounters = .allocate(capacity: storedRegions)
        sequenceCounters.initialize(repeating: 0, count: storedRegions)
        controllerValues = Self.startingControllers(setList)
        noteVelocities = .allocate(capacity: 16 * 128)
        noteSets = .allocate(capacity: 16 * 128)
        noteSets.initialize(repeating: 0, count: 16 * 128)
        noteVelocities.initialize(repeating: 0, count: 16 * 128)
        keyShifts = .allocate(capacity: 16 * 128)
        keyShifts.initialize(repeating: Int8(clamping: configuration.transpose), count: 16 * 128)
        heldKeyCounts = .allocate(capacity: 16)
        heldKeyCounts.initialize(repeating: 0, count: 16)
        pitchScratch = .allocate(capacity: 2 * configuration.maxBlockFrames)
        pitchScratch.initialize(repeating: 0, count: 2 * configuration.maxBlockFrames)
        precondition(
            seamPadding == samplePadding && samplePadding == InterpolationKernels.maximumTaps / 2
                && seamFrames >= 2 * InterpolationKernels.maximumTaps + 64)
        seamScratch = .allocate(capacity: seamCapacity)
        seamScratch.initialize(repeating: 0, count: seamCapacity)
        noteVoiceCounts = .allocate(capacity: 128)
        noteVoiceCounts.initialize(repeating: 0, count: 128)
        let (distinct, setRooms, mixes) = Engine.roomTable(setList, roomsToChoose: configuration.roomsToChoose)
        setMixes = mixes
        roomSettings = distinct
        roomCount = distinct.count
        rooms = .allocate(capacity: roomCount)
        roomIsWet = .allocate(capacity: roomCount)
        for (r, settings) in distinct.enumerated() {
            (rooms + r).initialize(to: Reverb(settings: settings, sampleRate: configuration.sampleRate))
            roomIsWet[r] = settings != .off
        }
        hasReverb = distinct.contains { $0 != .off }
        var lanes: UInt128 = 0
        for (r, settings) in distinct.enumerated() where settings != .off { lanes |= UInt128(0xFFFF) << (16 * r) }
        wetLanes = lanes
        self.setRooms = .allocate(capacity: setCount)
        self.setRooms.initialize(from: setRooms, count: setCount)
        sendBuses = .allocate(capacity: roomCount * configuration.maxBlockFrames)
        sendBuses.initialize(repeating: 0, count: roomCount * configuration.maxBlockFrames)
        (panTable, controllerGains) = Self.controllerTables()

        // Twice the polyphony: a stolen voice keeps its slot while it fades out.
        let slotCount = configuration.polyphony * 2
        (silence, voices, pitchedVoices, active, free) = Self.voiceSlots(count: slotCount)
        freeCount = slotCount

        let master = linearGain(decibels: instrument.masterVolumeDecibels)
        masterGain = master
        masterGainBits = Atomic(master.bitPattern)
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: ChannelState(), count: 16)
        buses = .allocate(capacity: 16 * roomCount * configuration.maxBlockFrames)
        buses.initialize(repeating: 0, count: 16 * roomCount * configuration.maxBlockFrames)
        sideBuses = .allocate(capacity: 32 * roomCount * configuration.maxBlockFrames)
        sideBuses.initialize(repeating: 0, count: 32 * roomCount * configuration.maxBlockFrames)
        segmentRight = .allocate(capacity: configuration.maxBlockFrames)
        segmentRight.initialize(repeating: 0, count: configuration.maxBlockFrames)
        limiterRecovery = Float(1 / max(configuration.limiterReleaseSeconds * rate, 1))
        fadeFrames = max(1, Int((configuration.fadeSeconds * rate).rounded()))
        for ch in 0..<16 {
            channels[ch].bus = Ramp(busTarget(channel: ch))
            channels[ch].set = setList.startingSets[ch]
        }
        precondition(setCount <= 255, "at most 255 sets: the loader refuses more")
        publishSets()
    }

    deinit { releaseStorage() }

    /// The pan law's left and right gains for each CC10 value (value v: 2v and 2v + 1), and the
    /// square law's gain for each value of CC7, CC11 and CC91. Thread: control.
    static func controllerTables() -> (pan: UnsafeMutablePointer<Float>, gains: UnsafeMutablePointer<Float>) {
        let pan = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        for v in 0..<128 {
            let (left, right) = panGains(panPosition(controllerValue: v))
            pan[2 * v] = left
            pan[2 * v + 1] = right
        }
        let gains = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        for v in 0..<128 { gains[v] = VelocityCurve.square.gain(velocity: v) }
        return (pan, gains)
    }

    /// `count` idle voice slots (pointing at one silent frame), their pitched state, the active
    /// list (empty) and the free list (every slot, the first on top). Thread: control.
    static func voiceSlots(count: Int) -> (
        silence: UnsafeMutablePointer<Int16>, voices: UnsafeMutablePointer<Voice>,
        pitched: UnsafeMutablePointer<PitchedVoice>, active: UnsafeMutablePointer<Int32>,
        free: UnsafeMutablePointer<Int32>
    ) {
        let silence = UnsafeMutablePointer<Int16>.allocate(capacity: 1)
        silence.initialize(to: 0)
        let idle = Voice(
            frames: UnsafePointer(silence), frameCount: 0,
            gain: Ramp(0), serial: 0, releaseFrames: 1, chokeGroup: 0, channel: 0,
            note: 0, damp: false)
        let voices = UnsafeMutablePointer<Voice>.allocate(capacity: count)
        voices.initialize(repeating: idle, count: count)
        let pitched = UnsafeMutablePointer<PitchedVoice>.allocate(capacity: count)
        pitched.initialize(repeating: PitchedVoice(), count: count)
        let active = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        active.initialize(repeating: 0, count: count)
        let free = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        for i in 0..<count { free[i] = Int32(count - 1 - i) }
        return (silence, voices, pitched, active, free)
    }
}
