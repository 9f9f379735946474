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
    /// The regions of every set, set by set: each instrument's mapped keys first (as
    /// `Region(key:)` makes them), then its own regions.
    let regions: UnsafeMutablePointer<RegionSlot>
    let regionCount: Int
    /// The sets (one for a single instrument), and whether program changes choose among them.
    let sets: UnsafeMutablePointer<SetSlot>
    let setCount: Int
    /// The sets' names, in order (a reload finds a set again by its name). Thread: any.
    public let setNames: [String]
    let followsProgramChange: Bool
    /// For each set s and note n, the regions the note may start: `candidates[candidateStarts[129 s
    /// + n] ..< candidateStarts[129 s + n + 1]]` (a mapped key's region, or its folded one, or
    /// every region whose key range holds the note).
    let candidateStarts: UnsafeMutablePointer<Int32>
    let candidates: UnsafeMutablePointer<Int32>
    /// Likewise the regions a note's note-off starts (release samples).
    let releaseCandidateStarts: UnsafeMutablePointer<Int32>
    let releaseCandidates: UnsafeMutablePointer<Int32>
    /// Round robin: per region, the strikes of its keys so far (modulo its sequence length).
    let sequenceCounters: UnsafeMutablePointer<Int32>
    /// The regions' controller ranges (`RegionSlot.controllerRangeStart`).
    let controllerRangeNumbers: UnsafeMutablePointer<Int32>
    let controllerRangeLows: UnsafeMutablePointer<UInt8>
    let controllerRangeHighs: UnsafeMutablePointer<UInt8>
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
    /// Per note: whether any of its regions in any set is damped (its note-off changes what
    /// sounds, whichever set struck it). Per set and note (128 s + n): whether any chokes.
    let noteDamps: UnsafeMutablePointer<Bool>
    let noteChokes: UnsafeMutablePointer<Bool>
    /// Per set and note (128 s + n): the note whose pitch its regions play at (itself, or the
    /// note a set that folds unmapped notes moves it to).
    let soundsAs: UnsafeMutablePointer<UInt8>
    /// Per region and key in its range: the 32.32 playback increment and the kernel level
    /// (-1: the sample's own pitch).
    let increments: UnsafeMutablePointer<UInt64>
    let incrementKernels: UnsafeMutablePointer<Int32>
    /// The interpolation kernels (kept alive here; the render thread reads `kernelLevels`).
    let kernels: InterpolationKernels
    let kernelLevels: UnsafeMutablePointer<KernelLevel>
    let kernelLevelCount: Int
    /// Whether any region is pitched, and the pitched voices' read-out (two channels of a block).
    let hasPitched: Bool
    let pitchScratch: UnsafeMutablePointer<Float>
    /// A loop's seam copied out for the kernel loop (`seamWindow`): 16-bit frames, stereo at most.
    let seamScratch: UnsafeMutablePointer<Int16>
    /// Per region r and velocity v, at 128r + v: the strike's gain.
    let velocityGains: UnsafeMutablePointer<Float>
    let controllerGains: UnsafeMutablePointer<Float>
    /// Velocity timbre: for region r and velocity v, the voice's low-pass coefficient at 128r + v
    /// (1: open). Only made when the instrument asks for it.
    let timbreTable: UnsafeMutablePointer<Float>
    let hasTimbre: Bool
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
    /// `Instrument.followsPanController` (of any set).
    let followsPanController: Bool
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
    /// Whether any region is off the centre (if not, no voice is checked for it).
    let hasPannedKeys: Bool
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

        let (allRegions, setOfRegion, setBases) = Engine.combinedRegions(setList)
        regionCount = allRegions.count
        setCount = setList.sets.count
        setNames = setList.sets.map(\.name)
        followsProgramChange = setList.followsProgramChange
        sets = .allocate(capacity: setCount)
        sets.initialize(from: Engine.setSlots(setList), count: setCount)
        let storedRegions = max(regionCount, 1)
        let (allIncrements, bases, highestRatio) = Engine.playbackIncrements(
            allRegions, setOfRegion: setOfRegion, setList: setList, bank: bank)
        kernels = InterpolationKernels(quality: configuration.interpolation, highestRatio: highestRatio)
        kernelLevels = kernels.levels
        kernelLevelCount = kernels.levelCount
        increments = .allocate(capacity: max(allIncrements.count, 1))
        incrementKernels = .allocate(capacity: max(allIncrements.count, 1))
        for (i, increment) in allIncrements.enumerated() {
            increments[i] = increment
            incrementKernels[i] = increment == 1 << 32 ? -1 : Int32(kernels.level(increment: increment))
        }
        regions = .allocate(capacity: storedRegions)
        let built = Engine.regionSlots(
            allRegions, setOfRegion: setOfRegion, setList: setList, bank: bank, increments: allIncrements, bases: bases,
            sampleRate: configuration.sampleRate)
        for (i, slot) in built.slots.enumerated() { (regions + i).initialize(to: slot) }
        let (anyPitched, anyOffCentre, allDamps) = (built.anyPitched, built.anyOffCentre, built.damps)
        let (rangeNumbers, rangeLows, rangeHighs) = (built.rangeNumbers, built.rangeLows, built.rangeHighs)
        hasPitched = anyPitched
        let rangeCount = max(rangeNumbers.count, 1)
        controllerRangeNumbers = .allocate(capacity: rangeCount)
        controllerRangeNumbers.initialize(repeating: 0, count: rangeCount)
        controllerRangeNumbers.update(from: rangeNumbers, count: rangeNumbers.count)
        controllerRangeLows = .allocate(capacity: rangeCount)
        controllerRangeLows.initialize(repeating: 0, count: rangeCount)
        controllerRangeLows.update(from: rangeLows, count: rangeLows.count)
        controllerRangeHighs = .allocate(capacity: rangeCount)
        controllerRangeHighs.initialize(repeating: 127, count: rangeCount)
        controllerRangeHighs.update(from: rangeHighs, count: rangeHighs.count)
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
        hasPannedKeys = anyOffCentre

        let tables = Engine.candidateTables(
            setList, setBases: setBases, damps: allDamps, chokes: allRegions.map { $0.group != 0 })
        (candidateStarts, candidates) = (tables.starts, tables.list)
        (releaseCandidateStarts, releaseCandidates) = (tables.releaseStarts, tables.releaseList)
        (noteDamps, noteChokes, soundsAs) = (tables.noteDamps, tables.noteChokes, tables.soundsAs)
        noteVoiceCounts = .allocate(capacity: 128)
        noteVoiceCounts.initialize(repeating: 0, count: 128)
        velocityGains = .allocate(capacity: 128 * storedRegions)
        controllerGains = .allocate(capacity: 128)
        hasTimbre = setList.sets.contains { $0.instrument.velocityTimbre > 0 }
        timbreTable = .allocate(capacity: storedRegions * 128)
        timbreTable.initialize(repeating: 1, count: storedRegions * 128)
        for (r, region) in allRegions.enumerated() {
            let own = setList.sets[setOfRegion[r]].instrument
            for v in 0..<128 {
                velocityGains[128 * r + v] = region.velocityGains?[v] ?? own.velocityCurve.gain(velocity: v)
                if own.velocityTimbre > 0 {
                    timbreTable[128 * r + v] = timbreCoefficient(
                        note: region.timbreNote ?? region.pitchKeycenter, velocity: v,
                        amount: own.velocityTimbre, sampleRate: configuration.sampleRate)
                }
            }
        }
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
        for k in 0..<setCount { sets[k].room = setRooms[k] }
        followsPanController = setList.sets.contains { $0.instrument.followsPanController }
        sendBuses = .allocate(capacity: roomCount * configuration.maxBlockFrames)
        sendBuses.initialize(repeating: 0, count: roomCount * configuration.maxBlockFrames)
        panTable = .allocate(capacity: 256)
        for v in 0..<128 {
            let (left, right) = panGains(panPosition(controllerValue: v))
            panTable[2 * v] = left
            panTable[2 * v + 1] = right
        }
        for v in 0..<128 { controllerGains[v] = VelocityCurve.square.gain(velocity: v) }

        // Twice the polyphony: a stolen voice keeps its slot while it fades out.
        let slotCount = configuration.polyphony * 2
        silence = .allocate(capacity: 1)
        silence.initialize(to: 0)
        let idle = Voice(
            frames: UnsafePointer(silence), frameCount: 0,
            gain: Ramp(0), serial: 0, releaseFrames: 1, chokeGroup: 0, channel: 0,
            note: 0, damp: false)
        voices = .allocate(capacity: slotCount)
        voices.initialize(repeating: idle, count: slotCount)
        pitchedVoices = .allocate(capacity: slotCount)
        pitchedVoices.initialize(repeating: PitchedVoice(), count: slotCount)
        active = .allocate(capacity: slotCount)
        active.initialize(repeating: 0, count: slotCount)
        free = .allocate(capacity: slotCount)
        for i in 0..<slotCount { free[i] = Int32(slotCount - 1 - i) }
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
}
