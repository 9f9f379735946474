import BellkeysModel

/// A modulator as the render thread reads it (`Modulator`): its sources (`velocity`, `key`, a
/// controller number 0...127, `channelPressure`, `keyPressure`, `pitchWheel`, `pitchWheelRange`,
/// or `none` for no amount source), where its curves start in
/// `NoteModulatorTable.curves`, its amount and destination (`level`, `pitch`, `cutoff`,
/// `resonance`, a modulation source's depth from `firstDepth` on, an envelope's time from
/// `firstTime` or `firstModulationTime` on); the render thread tests
/// them as literals (`noteOnSums`).
struct ModulatorTerm {
    static let velocity = -1
    static let key = -2
    static let none = -3
    static let channelPressure = -4
    static let keyPressure = -5
    static let pitchWheel = -6
    static let pitchWheelRange = -7
    static let level: UInt8 = 0
    static let pitch: UInt8 = 1
    static let cutoff: UInt8 = 2
    static let resonance: UInt8 = 3
    /// A modulation source's depth: this + its `ModulatedDepth` lane.
    static let firstDepth: UInt8 = 4
    /// The volume envelope's delay, attack, hold, decay, sustain and release: this + 0 ... 5.
    static let firstTime: UInt8 = 10
    /// The modulation envelope's: this + 0 ... 5 (`NoteOnSums.times` lanes 8 ... 13).
    static let firstModulationTime: UInt8 = 18
    /// The sample's start, fine and coarse (`NoteOnSums.times` lanes 6 and 7).
    static let startOffset: UInt8 = 16
    static let startOffsetCoarse: UInt8 = 17

    var source: Int
    var amountSource: Int
    var destination: UInt8
    var curve: Int32
    var amountCurve: Int32
    var amount: Double
}

/// Where a region's note-on modulators keep what they move (`NoteModulators`): the lowest and
/// highest cutoff (Hz, the highest below 0.45 of the output's rate), the most decibels they may
/// add to a full-velocity strike's level, the region's resonance (dB) and where the sum stays,
/// and the share of its change the level moves by.
struct NoteModulatorBounds {
    var lowestCutoff = 0.0
    var highestCutoff = 0.0
    var levelCeiling = 0.0
    var resonance = 0.0
    var lowestResonance = 0.0
    var highestResonance = 0.0
    var resonanceLevelShare = 0.0
    /// The region's start offsets, fine and coarse (`NoteModulators.startOffsets`).
    var startFine = 0.0
    var startCoarse = 0.0
    /// Whether the pitch's cents are cut down to a whole cent (`NoteModulators.pitchInWholeCents`).
    var wholeCents = false
}

/// Every region's note-on modulators in one list, their curves (128 values each) in another,
/// and for each region the bounds of what they move.
/// Built once on the control thread; read only after. Thread: built on control; read on render.
struct NoteModulatorTable: BitwiseCopyable {
    let terms: UnsafePointer<ModulatorTerm>
    let curves: UnsafePointer<Double>
    /// Per region: where its modulators keep what they move.
    let bounds: UnsafePointer<NoteModulatorBounds>

    /// The table of `regions`' modulators; each region's slot in `slots` is told where its
    /// terms lie (`RegionSlot.modulatorStart`, `modulatorCount`).
    init(_ regions: [Region], placing slots: inout [RegionSlot], sampleRate: Int) {
        var terms: [ModulatorTerm] = [], curves: [Double] = []
        var bounds: [NoteModulatorBounds] = []
        func number(_ source: ModulatorSource?) -> Int {
            switch source {
            case .velocity: ModulatorTerm.velocity
            case .key: ModulatorTerm.key
            case .controller(let n): max(0, min(127, n))
            case .channelPressure: ModulatorTerm.channelPressure
            case .keyPressure: ModulatorTerm.keyPressure
            case .pitchWheel: ModulatorTerm.pitchWheel
            case .pitchWheelRange: ModulatorTerm.pitchWheelRange
            case nil: ModulatorTerm.none
            }
        }
        // Each curve once, however many modulators share it (a wheel's has 16,384 values).
        var placed: [[Double]: Int32] = [:]
        func stored(_ curve: [Double], for source: ModulatorSource?) -> Int32 {
            let count = source?.valueCount ?? 128
            let values = (0..<count).map { $0 < curve.count ? curve[$0] : (curve.last ?? 0) }
            if let at = placed[values] { return at }
            let at = Int32(curves.count)
            curves += values
            placed[values] = at
            return at
        }
        func destination(_ d: ModulatorDestination) -> UInt8 {
            switch d {
            case .levelDecibels: ModulatorTerm.level
            case .pitchCents: ModulatorTerm.pitch
            case .cutoffCents: ModulatorTerm.cutoff
            case .resonanceDecibels: ModulatorTerm.resonance
            case .envelopeToPitchCents: ModulatorTerm.firstDepth + ModulatedDepth.envelopeToPitch
            case .envelopeToCutoffCents: ModulatorTerm.firstDepth + ModulatedDepth.envelopeToCutoff
            case .modulationLFOToPitchCents: ModulatorTerm.firstDepth + ModulatedDepth.modulationLFOToPitch
            case .modulationLFOToCutoffCents: ModulatorTerm.firstDepth + ModulatedDepth.modulationLFOToCutoff
            case .vibratoLFOToPitchCents: ModulatorTerm.firstDepth + ModulatedDepth.vibratoLFOToPitch
            // (Decibels as the engine's depth counts them: centibels.)
            case .modulationLFOToVolumeDecibels: ModulatorTerm.firstDepth + ModulatedDepth.modulationLFOToVolume
            case .envelopeDelayCents: ModulatorTerm.firstTime
            case .envelopeAttackCents: ModulatorTerm.firstTime + 1
            case .envelopeHoldCents: ModulatorTerm.firstTime + 2
            case .envelopeDecayCents: ModulatorTerm.firstTime + 3
            case .envelopeSustainCentibels: ModulatorTerm.firstTime + 4
            case .envelopeReleaseCents: ModulatorTerm.firstTime + 5
            case .modulationEnvelopeDelayCents: ModulatorTerm.firstModulationTime
            case .modulationEnvelopeAttackCents: ModulatorTerm.firstModulationTime + 1
            case .modulationEnvelopeHoldCents: ModulatorTerm.firstModulationTime + 2
            case .modulationEnvelopeDecayCents: ModulatorTerm.firstModulationTime + 3
            case .modulationEnvelopeSustainPerMille: ModulatorTerm.firstModulationTime + 4
            case .modulationEnvelopeReleaseCents: ModulatorTerm.firstModulationTime + 5
            case .startOffsetFrames: ModulatorTerm.startOffset
            case .startOffsetCoarseFrames: ModulatorTerm.startOffsetCoarse
            }
        }
        for (i, region) in regions.enumerated() {
            slots[i].modulatorStart = Int32(terms.count)
            let set = region.noteModulators
            for m in set?.modulators ?? [] {
                terms.append(
                    ModulatorTerm(
                        source: number(m.source), amountSource: number(m.amountSource),
                        destination: destination(m.destination), curve: stored(m.curve, for: m.source),
                        amountCurve: m.amountSource == nil ? 0 : stored(m.amountCurve, for: m.amountSource),
                        amount: m.destination == .modulationLFOToVolumeDecibels ? 10 * m.amount : m.amount))
            }
            slots[i].modulatorCount = Int32(terms.count) - slots[i].modulatorStart
            markLive(&slots[i], region, sampleRate: sampleRate)
            let range = set?.cutoffRange ?? 0...Double.infinity
            let resonances = set?.resonanceRange ?? 0...0
            bounds.append(
                NoteModulatorBounds(
                    lowestCutoff: range.lowerBound, highestCutoff: min(range.upperBound, 0.45 * Double(sampleRate)),
                    levelCeiling: set?.levelCeilingDecibels ?? 0, resonance: region.resonance,
                    lowestResonance: resonances.lowerBound, highestResonance: resonances.upperBound,
                    resonanceLevelShare: set?.resonanceLevelShare ?? 0,
                    startFine: Double(set?.startOffsets.fine ?? 0), startCoarse: Double(set?.startOffsets.coarse ?? 0),
                    wholeCents: set?.pitchInWholeCents ?? false))
        }
        let empty = ModulatorTerm(
            source: 0, amountSource: ModulatorTerm.none, destination: 0, curve: 0, amountCurve: 0, amount: 0)
        self.terms = storedCopy(terms, padding: empty)
        self.curves = storedCopy(curves, padding: 0)
        self.bounds = storedCopy(bounds, padding: NoteModulatorBounds())
    }

    func deallocate() {
        terms.deallocate()
        curves.deallocate()
        bounds.deallocate()
    }
}

/// Marks a region's slot whose modulators read live sources (`RegionSlot.hasLiveModulators`):
/// modulated, so that its voices have ticks to take them at (with no envelope or LFO of its own
/// when it had none: its modulators' bounds are its), and whether its voices may wait idle
/// (`RegionSlot.mayIdle`; never a region by sfizz's rules). Thread: control.
private func markLive(_ slot: inout RegionSlot, _ region: Region, sampleRate: Int) {
    let set = region.noteModulators
    slot.hasLiveModulators = set?.modulators.contains { $0.isLive } ?? false
    // (A voice by sfizz's rules never idles: its LFOs are computed from its age, and its filter
    // LFO's depth is not among its region's `ModulationTicks`.)
    slot.mayIdle =
        (set?.modulators.allSatisfy { !$0.isLive || $0.destination.isLFODepth } ?? true)
        && region.modulation?.rules != .sfz
    if slot.hasLiveModulators, !slot.hasModulation {
        slot.hasModulation = true
        slot.modulation = ModulationTicks()
        slot.modulation.lowestCutoff = set?.cutoffRange.lowerBound ?? 0
        slot.modulation.highestCutoff = min(set?.cutoffRange.upperBound ?? 0, 0.45 * Double(sampleRate))
        slot.modulation.wholeCents = set?.pitchInWholeCents ?? false
    }
}
