/// What a modulator reads: the note's velocity or key (fixed at note-on), or a live source of
/// its channel, read as the note starts and again whenever it moves: a controller, the
/// channel's pressure, the key's own pressure (0...127 each), the pitch wheel (0...16383) or
/// its range (RPN 0, whole semitones 0...127).
public enum ModulatorSource: Sendable, Equatable {
    case velocity
    case key
    case controller(Int)
    case channelPressure
    case keyPressure
    case pitchWheel
    case pitchWheelRange

    /// Whether it can move while the note sounds.
    public var isLive: Bool {
        switch self {
        case .velocity, .key: false
        default: true
        }
    }

    /// How many values it has: a curve holds one for each (16,384 for the wheel, else 128).
    public var valueCount: Int { self == .pitchWheel ? 16_384 : 128 }
}

/// Where a modulator's value goes, in the unit it adds there.
public enum ModulatorDestination: UInt8, Sendable, Equatable, CaseIterable {
    /// Decibels of level (positive: louder).
    case levelDecibels
    /// Cents of pitch.
    case pitchCents
    /// Cents of the low-pass's cutoff.
    case cutoffCents
    /// Decibels of the low-pass's resonance.
    case resonanceDecibels
    /// The modulation sources' depths (`VoiceModulation`'s): cents of pitch and of cutoff at the
    /// modulation envelope's full level, at the modulation LFO's peak, cents of pitch at the
    /// vibrato LFO's peak, decibels of level at the modulation LFO's peak.
    case envelopeToPitchCents
    case envelopeToCutoffCents
    case modulationLFOToPitchCents
    case modulationLFOToCutoffCents
    case vibratoLFOToPitchCents
    case modulationLFOToVolumeDecibels

    /// The volume envelope's times, in cents of time (1200: twice as long), and its sustain in
    /// centibels of attenuation (`Envelope.timecents`, which a region they move has).
    case envelopeDelayCents
    case envelopeAttackCents
    case envelopeHoldCents
    case envelopeDecayCents
    case envelopeSustainCentibels
    case envelopeReleaseCents

    /// The modulation envelope's times, in cents of time, and its sustain in tenths of a percent
    /// of its fall (`ModulationEnvelope.timecents`, which a region they move has).
    case modulationEnvelopeDelayCents
    case modulationEnvelopeAttackCents
    case modulationEnvelopeHoldCents
    case modulationEnvelopeDecayCents
    case modulationEnvelopeSustainPerMille
    case modulationEnvelopeReleaseCents

    /// Where the sample starts: frames, and units of 32,768 frames (a SoundFont's fine and
    /// coarse start offsets; `NoteModulators.startOffsets` holds the region's own).
    case startOffsetFrames
    case startOffsetCoarseFrames

    /// Whether it moves a modulation source's depth (a region with one has modulation).
    public var isDepth: Bool {
        (ModulatorDestination.envelopeToPitchCents
            .rawValue...ModulatorDestination.modulationLFOToVolumeDecibels.rawValue)
            .contains(rawValue)
    }

    /// Whether it moves the volume envelope's times or sustain.
    public var isEnvelopeTime: Bool {
        (ModulatorDestination.envelopeDelayCents.rawValue...ModulatorDestination.envelopeReleaseCents.rawValue)
            .contains(rawValue)
    }

    /// Whether it moves the modulation envelope's times or sustain.
    public var isModulationEnvelopeTime: Bool {
        (ModulatorDestination.modulationEnvelopeDelayCents
            .rawValue...ModulatorDestination.modulationEnvelopeReleaseCents.rawValue)
            .contains(rawValue)
    }

    /// Whether it moves an LFO's depth (not the modulation envelope's).
    public var isLFODepth: Bool {
        isDepth && self != .envelopeToPitchCents && self != .envelopeToCutoffCents
    }

    /// Whether it is read only as a note starts, even from a live source: the envelopes' times
    /// and where the sample starts.
    public var isReadOnce: Bool {
        isEnvelopeTime || isModulationEnvelopeTime || self == .startOffsetFrames || self == .startOffsetCoarseFrames
    }
}

/// A modulator: `amount` × the source's value through `curve` × the amount source's value
/// through `amountCurve` (1 without one), added to the destination when a voice starts, and
/// again when a live source moves (`ModulatorSource.isLive`; the level, the pitch, the filter
/// and the modulation sources' depths follow it; the envelopes' times and the sample's start
/// stay as the note began). A curve holds the value (−1...1) at each of its source's values
/// (`ModulatorSource.valueCount`), so any shape a format has (a SoundFont's linear, concave,
/// convex or switch, unipolar or bipolar, either direction) is played exactly as the format
/// computes it.
public struct Modulator: Sendable, Equatable {
    public var source: ModulatorSource
    public var curve: [Double]
    public var amountSource: ModulatorSource?
    public var amountCurve: [Double]
    public var amount: Double
    public var destination: ModulatorDestination

    public init(
        source: ModulatorSource, curve: [Double], amountSource: ModulatorSource? = nil, amountCurve: [Double] = [],
        amount: Double, destination: ModulatorDestination
    ) {
        self.source = source
        self.curve = curve
        self.amountSource = amountSource
        self.amountCurve = amountCurve
        self.amount = amount
        self.destination = destination
    }

    /// A straight curve from 0 at input 0 to 127/128 at 127 (the input over 128, as a
    /// SoundFont reads a controller).
    public static let linear: [Double] = (0..<128).map { Double($0) / 128 }

    /// Whether it reads a source that can move while the note sounds.
    public var isLive: Bool { source.isLive || amountSource?.isLive == true }
}

/// A region's note-on modulators and the bounds of what they move. A region without them
/// (`Region.noteModulators` nil) starts its voices as before they existed.
public struct NoteModulators: Sendable, Equatable {
    public var modulators: [Modulator]
    /// Where a cutoff they move stays, in Hz (and below 0.45 of the output's rate): by default
    /// a SoundFont's (`VoiceModulation.soundFontCutoffRange`).
    public var cutoffRange: ClosedRange<Double>
    /// The most decibels they may add to the level of a strike at full velocity; a softer
    /// strike's may rise as far again as its velocity took it down. (A SoundFont's attenuation,
    /// the zone's, the velocity's, the controllers' and theirs summed, never goes below 0.)
    public var levelCeilingDecibels: Double
    /// Where the resonance they move stays, in decibels (the region's and theirs summed: a
    /// SoundFont's 0 to 96), and the share of its change the level moves by (a SoundFont's
    /// filter turns its passband down by half the peak: −0.5).
    public var resonanceRange: ClosedRange<Double>
    public var resonanceLevelShare: Double
    /// The region's own start offsets, fine (frames) and coarse (32,768 frames), to which
    /// modulators to the start add: each sum is cut down to a whole number, as FluidSynth cuts
    /// it, and the start kept within the sample.
    public var startOffsets: (fine: Int, coarse: Int) = (0, 0)
    /// Whether the cents they move the pitch by are cut down to a whole cent (a SoundFont's:
    /// FluidSynth plays a voice's pitch in whole cents, `VoiceModulation.pitchInWholeCents`).
    public var pitchInWholeCents = false

    public static func == (a: NoteModulators, b: NoteModulators) -> Bool {
        a.modulators == b.modulators && a.cutoffRange == b.cutoffRange
            && a.levelCeilingDecibels == b.levelCeilingDecibels && a.resonanceRange == b.resonanceRange
            && a.resonanceLevelShare == b.resonanceLevelShare && a.startOffsets == b.startOffsets
            && a.pitchInWholeCents == b.pitchInWholeCents
    }

    public init(
        modulators: [Modulator], cutoffRange: ClosedRange<Double> = VoiceModulation.soundFontCutoffRange,
        levelCeilingDecibels: Double = 0, resonanceRange: ClosedRange<Double> = 0...96, resonanceLevelShare: Double = 0
    ) {
        self.modulators = modulators
        self.cutoffRange = cutoffRange
        self.levelCeilingDecibels = levelCeilingDecibels
        self.resonanceRange = resonanceRange
        self.resonanceLevelShare = resonanceLevelShare
    }
}
