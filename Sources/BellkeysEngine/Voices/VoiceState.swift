/// One region in the form the render thread reads.
struct RegionSlot {
    var frames: UnsafePointer<Int16>
    var frameCount: Int
    var isStereo: Bool
    /// Region gain times the sample's storage scale.
    var gain: Float
    var damp: Bool
    var releaseFrames: Int
    /// Choke (`Region.group`, `offBy`, `offReleases`).
    var group: Int
    var offBy: Int
    var offReleases: Bool
    /// The choke's fade in frames (0: `VoicePool.fadeFrames`).
    var offFrames: Int
    /// 0: any strike; 1: only with no other key of the channel held; 2: only with one held.
    var heldKeys: UInt8
    /// Its own bend range in cents (`hasBendRange`), else the channel's.
    var hasBendRange: Bool
    var bendUpCents: Double
    var bendDownCents: Double
    /// Selection (`Region`'s round robin, random range, keyswitch (-1: none), and its
    /// controller ranges at `controllerRangeStart ..< + controllerRangeCount` in the engine's tables).
    var sequenceLength: Int32
    var sequencePosition: Int32
    var randomLow: Double
    var randomHigh: Double
    var keyswitch: Int
    var controllerRangeStart: Int
    var controllerRangeCount: Int
    /// Gains on the left and right channels (the pan law for mono, a balance for stereo);
    /// `isCentred` when both are 1 and the sample is mono.
    var leftGain: Float
    var rightGain: Float
    var isCentred: Bool
    /// Keys and velocities it answers.
    var keyLow: Int
    var keyHigh: Int
    var velocityLow: Int
    var velocityHigh: Int
    /// Whether its voices take the pitched path (`mixPitchedVoice`): transposed at some key, a
    /// stereo sample, an envelope, a loop or a start offset. Otherwise a voice is today's
    /// exact one-shot at the sample's own pitch.
    var isPitched: Bool
    /// Its 32.32 playback increments start here in `RegionTable.increments`, for keys
    /// `keyLow...keyHigh` (a key outside is clamped into it: a folded note).
    var incrementBase: Int
    var hasEnvelope: Bool
    var envelope: EnvelopeFrames
    var offset: Int
    var loop: VoiceLoop
    var loopStart: Int
    var loopEnd: Int
    /// The filter (0: none, 1: one pole, 2: two poles), its cutoff, Q and tracking.
    var filterKind: UInt8
    var cutoff: Double
    var filterQ: Double
    var filterVelocityCents: Double
    var filterKeytrackCents: Double
    var pitchKeycenter: Int
    /// The set the region belongs to (`RegionTable.sets`).
    var set: Int
    /// Its modulation envelope and LFOs (`Region.modulation`), if it has them: its voices are
    /// modulated.
    var hasModulation = false
    var modulation = ModulationTicks()
    /// Its note-on modulators (`Region.noteModulators`): `RegionTable.noteModulators.terms`
    /// `[modulatorStart ..< + modulatorCount]`.
    var modulatorStart: Int32 = 0
    var modulatorCount: Int32 = 0
    /// Whether any of them reads a live source (`ModulatorSource.isLive`): its voices are
    /// modulated, and follow those sources as they move (`Engine.remodulate`).
    var hasLiveModulators = false
    /// Whether its voices may wait idle (`ModulatedVoice.idle`, while their depths are all 0):
    /// a live source of its modulators moves nothing but an LFO's depth (a SoundFont zone's CC1
    /// and channel pressure to its vibrato), so nothing moves a voice until it has a depth.
    var mayIdle = false
    /// Whether its note-on modulators move its envelope's times (`Envelope.timecents`), and
    /// those times: delay, attack, hold, decay (timecents), sustain (centibels), release.
    var hasTimedEnvelope = false
    var envelopeTimecents = SIMD8<Double>()
    /// Whether they move its modulation envelope's times (`ModulationEnvelope.timecents`), and
    /// those times, as above, the sustain in tenths of a percent.
    var hasTimedModulation = false
    var modulationTimecents = SIMD8<Double>()
    /// Whether its voices read nothing in their envelope's delay (`Envelope.readsInDelay` false).
    var holdsInDelay = false
    /// The fraction of a cent its whole-cent pitch leaves (`Region.pitchCentsFraction`).
    var pitchFraction = 0.0
    /// Its own send into its room (`Region.reverbSend`; such a region is pitched).
    var reverbSend: Float = 0
}

/// Where a voice is in its life.
enum VoicePhase: UInt8 {
    /// At its strike gain; counts toward polyphony.
    case sounding
    /// Fading after note-off on a damped key; counts toward polyphony, stolen first.
    case releasing
    /// Fast fade after being stolen, choked or silenced; no longer counts toward polyphony.
    case fading

    /// Whether this is `phase`. (Instead of `==`, which is synthesised in this file: a debug
    /// build checks `@_noLocks` file by file and cannot look into it from the render path's
    /// other files.)
    @_noLocks
    func `is`(_ phase: VoicePhase) -> Bool {
        switch (self, phase) {
        case (.sounding, .sounding), (.releasing, .releasing), (.fading, .fading): true
        default: false
        }
    }
}

/// One playing bell. Plain values only: no references, so copying one never retains.
struct Voice {
    var frames: UnsafePointer<Int16>
    var frameCount: Int
    var position = 0
    var gain: Ramp
    var serial: UInt64
    var releaseFrames: Int
    var chokeGroup: Int
    var channel: UInt8
    var note: UInt8
    var phase = VoicePhase.sounding
    var keyDown = true
    var damp: Bool
    var sustained = false
    /// Frames of the current segment before the voice starts.
    var delay = 0
    /// Off the centre: mixed into its channel's left and right buses with these gains, instead
    /// of the channel's one (centre) bus.
    var isPanned = false
    var leftGain: Float = 1
    var rightGain: Float = 1
    /// Through a low-pass (velocity timbre): its coefficient and its state.
    var isFiltered = false
    var lowpass: Float = 1
    var lowpassState: Float = 0, lowpassState2: Float = 0
    /// The region it plays (index into `RegionTable.regions`).
    var region: Int32 = 0
    /// Pitched (`RegionSlot.isPitched`): the rest of its state is `VoicePool.pitchedVoices[slot]`.
    var isPitched = false
    /// The room it rings in (`Mixer.rooms`), its set's when it started; its buses are those
    /// of lane `channel + 16 × room`.
    var room: UInt8 = 0
    /// The velocity it was struck with, which its modulators read again when a live source
    /// moves.
    var velocity: UInt8 = 0

    // Written out, with the attribute, so that the render path's other files may call it: a
    // debug build checks `@_noLocks` file by file and cannot look into a synthesised init.
    @_noLocks
    init(
        frames: UnsafePointer<Int16>, frameCount: Int, gain: Ramp, serial: UInt64, releaseFrames: Int,
        chokeGroup: Int, channel: UInt8, note: UInt8, damp: Bool
    ) {
        self.frames = frames
        self.frameCount = frameCount
        self.gain = gain
        self.serial = serial
        self.releaseFrames = releaseFrames
        self.chokeGroup = chokeGroup
        self.channel = channel
        self.note = note
        self.damp = damp
    }
}

/// What only a pitched voice needs, kept beside its `Voice` (`VoicePool.pitchedVoices`, slot for
/// slot) so that a plain voice, the one the dense mixes are made of, stays small. Plain values.
struct PitchedVoice {
    var isStereo = false
    /// Its position in 32.32 fixed point, its step per output frame (and that step with no
    /// pitch bend), its kernel level (-1: at its sample's own pitch, read frame by frame).
    var phaseFrames: UInt64 = 0
    var increment: UInt64 = 1 << 32
    var baseIncrement: UInt64 = 1 << 32
    var kernel: Int32 = -1
    /// Its loop, whether it is looping now, and whether the loop has come round at least once.
    var loop = VoiceLoop.none
    var looping = false
    var wrapped = false
    var loopStart = 0
    var loopEnd = 0
    var envelope = EnvelopeState()
    /// Its filter (`RegionSlot.filterKind`, or 3: velocity timbre): coefficients b0, b1, b2, a1,
    /// a2 (a one-pole's c in b0) and state (left z1, z2, right z1, z2).
    var filterKind: UInt8 = 0
    var filterCoefficients = SIMD8<Float>()
    var filterState = SIMD4<Float>()
    /// Whether its region has modulation (an envelope, LFOs): the rest of its state is
    /// `VoicePool.modulatedVoices[slot]`.
    var isModulated = false
    /// Whether its envelope's times are its own (`VoicePool.voiceEnvelopes[slot]`: its note-on
    /// modulators moved them), not its region's.
    var ownsEnvelope = false
    /// Whether it reads nothing while its envelope is in its delay (`RegionSlot.holdsInDelay`).
    var holdsInDelay = false

    @_noLocks
    init() {}
}

/// A set as the render thread keeps it (`RegionTable.sets`).
struct SetSlot {
    var program: Int
    /// -1: any bank.
    var bank: Int
    /// The keyswitch range (empty: none); the switch in force is `MIDIState.keyswitches`'.
    var keyswitchLow: Int
    var keyswitchHigh: Int
    /// `Instrument.followsPitchBend`, `pitchBendReach`, `restrikeReleases`, `chokesWithinChannel`.
    var followsPitchBend: Bool
    var pitchBendReach: Double
    var restrikeReleases: Bool
    var chokesWithinChannel: Bool
}
