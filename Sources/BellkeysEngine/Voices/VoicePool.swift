import BellkeysModel

/// The voices: twice the polyphony of slots (a stolen voice keeps its slot while it fades
/// out), their pitched state, the list of active slots and the free list, the voices per note
/// and per channel, and the scratch the pitched read-out uses. The counts that move with them
/// (`activeCount`, `freeCount` and the rest) are the engine's scalars. Written on the render
/// thread through its pointers; allocated in `init`, never resized. The engine owns its memory
/// (`deallocate`). Thread: built on control; render.
struct VoicePool: BitwiseCopyable {
    let slotCount: Int
    let voices: UnsafeMutablePointer<Voice>
    /// The pitched voices' own state, slot for slot with `voices`.
    let pitchedVoices: UnsafeMutablePointer<PitchedVoice>
    /// The modulated voices' own state, slot for slot with `voices`.
    let modulatedVoices: UnsafeMutablePointer<ModulatedVoice>
    /// What a modulated voice by sfizz's rules adds, slot for slot.
    let sfzVoices: UnsafeMutablePointer<SFZVoice>
    /// Per slot: the envelope of a voice whose note-on modulators moved its times
    /// (`PitchedVoice.ownsEnvelope`).
    let voiceEnvelopes: UnsafeMutablePointer<EnvelopeFrames>
    /// The modulation of each voice whose note-on modulators move its modulation envelope's
    /// times (`ModulatedVoice.ownsTicks`), slot for slot: its region's, counted again.
    let voiceModulations: UnsafeMutablePointer<ModulationTicks>
    /// What idle voice slots point at.
    let silence: UnsafeMutablePointer<Int16>
    /// The active slots (the first `Engine.activeCount`), and the free ones (`Engine.freeCount`).
    let active: UnsafeMutablePointer<Int32>
    let free: UnsafeMutablePointer<Int32>
    /// Active voices per MIDI note (kept as voices start and end).
    let noteVoiceCounts: UnsafeMutablePointer<Int32>
    /// Voices per channel on its bus; with none, a gain change applies at once.
    let channelVoiceCounts: UnsafeMutablePointer<Int>
    /// The pitched voices' read-out (two channels of a block).
    let pitchScratch: UnsafeMutablePointer<Float>
    /// A loop's seam copied out for the kernel loop (`seamWindow`): 16-bit frames, stereo at most.
    let seamScratch: UnsafeMutablePointer<Int16>
    /// Frames of the fade of a stolen or cut voice.
    let fadeFrames: Int
    /// How many voices ahead of the one mixing the sample data is prefetched.
    let prefetchDistance = 8

    /// Every slot idle (pointing at one silent frame) and free, the first on top. Thread: control.
    init(configuration: EngineConfiguration) {
        slotCount = configuration.polyphony * 2
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
        modulatedVoices = .allocate(capacity: slotCount)
        modulatedVoices.initialize(repeating: ModulatedVoice(), count: slotCount)
        sfzVoices = .allocate(capacity: slotCount)
        sfzVoices.initialize(repeating: SFZVoice(), count: slotCount)
        voiceEnvelopes = .allocate(capacity: slotCount)
        voiceEnvelopes.initialize(repeating: EnvelopeFrames(), count: slotCount)
        voiceModulations = .allocate(capacity: slotCount)
        voiceModulations.initialize(repeating: ModulationTicks(), count: slotCount)
        active = .allocate(capacity: slotCount)
        active.initialize(repeating: 0, count: slotCount)
        free = .allocate(capacity: slotCount)
        for i in 0..<slotCount { free[i] = Int32(slotCount - 1 - i) }
        noteVoiceCounts = .allocate(capacity: 128)
        noteVoiceCounts.initialize(repeating: 0, count: 128)
        channelVoiceCounts = .allocate(capacity: 16)
        channelVoiceCounts.initialize(repeating: 0, count: 16)
        pitchScratch = .allocate(capacity: 2 * configuration.maxBlockFrames)
        pitchScratch.initialize(repeating: 0, count: 2 * configuration.maxBlockFrames)
        precondition(
            seamPadding == samplePadding && samplePadding == InterpolationKernels.maximumTaps / 2
                && seamFrames >= 2 * InterpolationKernels.maximumTaps + 64)
        seamScratch = .allocate(capacity: seamCapacity)
        seamScratch.initialize(repeating: 0, count: seamCapacity)
        fadeFrames = max(1, Int((configuration.fadeSeconds * Double(configuration.sampleRate)).rounded()))
    }

    /// Frees what `init` allocated. Thread: control.
    func deallocate() {
        voices.deallocate()
        pitchedVoices.deallocate()
        modulatedVoices.deallocate()
        sfzVoices.deallocate()
        voiceEnvelopes.deallocate()
        voiceModulations.deallocate()
        silence.deallocate()
        active.deallocate()
        free.deallocate()
        noteVoiceCounts.deallocate()
        channelVoiceCounts.deallocate()
        pitchScratch.deallocate()
        seamScratch.deallocate()
    }
}
