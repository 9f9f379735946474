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
/// Its state is four parts by role, as sfizz and FluidSynth part theirs, each in its folder:
/// the instrument as built on the control thread and only read after (`table`, Regions/), the
/// MIDI state (`midi`, MIDI/), the voice pool (`pool`, Voices/) and the mixer (`mixer`,
/// Mixer/), each a struct of pointers; this file holds them, the scalars that move with them,
/// the queues and the counters, and builds them. The render path is split by what it does:
/// `EventMerge.swift` (the three queues merged by frame, each event applied at its frame),
/// `VoiceLife.swift` (voices start, release, fade, are stolen, end), `Controllers.swift`
/// (note-off, pedal, CC7/CC11, all-notes-off), `SegmentMix.swift` (voices into channel buses),
/// `ChannelMix.swift` (buses into the output and the rooms) and `Limiter.swift`; the control
/// side is in `EngineControl.swift`.
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
    /// Program changes for a program (and bank) no set has, or that a whole font's substitute
    /// played, and the last of them (channel × 2^21 + bank × 128 + program).
    public let missingPrograms = Atomic<Int>(0)
    public let lastMissingProgram = Atomic<Int>(0)
    /// The set each channel plays, 16 bits each (channels 0...3 in the first word, and so on),
    /// written when a program change chooses one; read with `currentSet(channel:)`.
    let channelSets0 = Atomic<UInt64>(0)
    let channelSets1 = Atomic<UInt64>(0)
    let channelSets2 = Atomic<UInt64>(0)
    let channelSets3 = Atomic<UInt64>(0)
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

    // Render-thread state, by role (as sfizz and FluidSynth part theirs): the instrument (read
    // only), the MIDI state, the voice pool and the mixer, each a struct of pointers to memory
    // allocated in init and never resized; the scalars that move with them below. Internal, not
    // private, so the render path's other files reach them; nothing outside the module can.
    /// The instrument as the render thread reads it: the regions, the sets, the tables derived
    /// from them. Built in init, never written after.
    let table: RegionTable
    /// The channels' controls, controller values, held keys, round robin, keyswitches.
    let midi: MIDIState
    /// The voice slots, the active and free lists, the voices per note and channel.
    let pool: VoicePool
    /// The buses, the channels' gains, the rooms, the controllers' gain tables.
    let mixer: Mixer
    /// The interpolation kernels (kept alive here; the render thread reads `table.kernelLevels`).
    let kernels: InterpolationKernels
    /// The sets' names, in order (a reload finds a set again by its name). Thread: any.
    public let setNames: [String]
    /// The rooms' settings (`mixer.rooms`), in order.
    public let roomSettings: [ReverbSettings]
    /// Each set's reverb mix as the engine was made (the default mix for a dry set): a room
    /// chosen live (`roomEvents`) keeps it.
    let setMixes: [Double]
    /// The most rooms an engine holds (16 lanes each: 128 lanes, one bit each in a `UInt128`).
    public static let maximumRooms = InstrumentSets.maximumRooms

    // The MIDI state's scalar: the random generator's state (SplitMix64, a fixed seed: renders
    // are repeatable).
    var randomState: UInt64 = 0x6265_6C6C_6B65_7973
    // The voice pool's scalars: the active slots (`pool.active`), the notes with any voice
    // (bits), the free slots, the voices not fading, the next voice's serial, and the serial of
    // the first voice the note-on being started may start (a choke spares the voices of its own
    // note-on, as FluidSynth's exclusive class and sfizz's groups do).
    var activeCount = 0
    var soundingLow: UInt64 = 0, soundingHigh: UInt64 = 0
    var freeCount: Int
    var soundingCount = 0
    var nextSerial: UInt64 = 0
    var noteOnSerial: UInt64 = 0
    // The mixer's scalars: the channels whose CC10 pan is off the centre or still moving (bit c:
    // channel c; their buses go out through their pan gains), the master gain, the limiter's.
    var pannedChannels: UInt16 = 0
    var masterGain: Float
    var limiterGain: Float = 1
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

        let layout = RegionLayout(setList, bank: bank)
        kernels = InterpolationKernels(quality: configuration.interpolation, highestRatio: layout.highestRatio)
        table = RegionTable(
            setList, layout: layout, bank: bank, kernels: kernels, sampleRate: configuration.sampleRate)
        setNames = setList.sets.map(\.name)
        midi = MIDIState(setList, regionCount: table.regionCount, transpose: configuration.transpose)
        pool = VoicePool(configuration: configuration)
        freeCount = pool.slotCount
        let (distinct, setRooms, mixes) = Engine.roomTable(setList, roomsToChoose: configuration.roomsToChoose)
        (roomSettings, setMixes) = (distinct, mixes)
        var linear: UInt16 = 0
        for ch in 0..<16 where setList.sets[setList.startingSets[ch]].instrument.linearReverbSend { linear |= 1 << ch }
        mixer = Mixer(rooms: distinct, setRooms: setRooms, linearSends: linear, configuration: configuration)
        let master = linearGain(decibels: instrument.masterVolumeDecibels)
        masterGain = master
        masterGainBits = Atomic(master.bitPattern)
        // Each channel's bus at its controls' gain (CC7 × CC11 × master).
        for ch in 0..<16 { mixer.channels[ch].bus = Ramp(busTarget(channel: ch)) }
        // A straight-line send starts where its channel's CC91 does (a SoundFont's: 0).
        for ch in 0..<16 where linear & (1 << ch) != 0 {
            mixer.channels[ch].send = Ramp(sendGain(channel: ch, value: Int(midi.controllerValues[128 * ch + 91])))
        }
        precondition(table.setCount <= Engine.maximumSetEvents, "at most 4,096 sets: a set event names no more")
        publishSets()
    }

    deinit { releaseStorage() }
}
