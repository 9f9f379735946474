import BellkeysModel

/// The instrument as the render thread reads it: every set's regions in one table and what is
/// derived from them (the sets, which regions each note may start, the playback increments and
/// their kernels, the strike gains, the velocity-timbre filters). Built once on the control
/// thread (`init`); its pointers are read-only, so nothing writes it after. The engine owns its
/// memory (`deallocate`, in the engine's deinit). Thread: built on control; read on render.
struct RegionTable: BitwiseCopyable {
    /// The regions of every set, set by set: each instrument's mapped keys first (as
    /// `Region(key:)` makes them), then its own regions.
    let regions: UnsafePointer<RegionSlot>
    let regionCount: Int
    /// The sets (one for a single instrument), and whether program changes choose among them.
    let sets: UnsafePointer<SetSlot>
    let setCount: Int
    let followsProgramChange: Bool
    /// A whole SoundFont's choice (`ProgramSelection.soundFont`): per bank b (0...128) and
    /// program p, at 128 b + p, the set a program change chooses (+ 65,536 when it is a
    /// substitute; -1: none), and the channel that plays bank 128 (-1: none). One entry of -1
    /// for a map's sets.
    let fontPrograms: UnsafePointer<Int32>
    let selectsAsSoundFont: Bool
    let drumChannel: Int
    /// For each set s and note n, the regions the note may start: `candidates[candidateStarts[129 s
    /// + n] ..< candidateStarts[129 s + n + 1]]` (a mapped key's region, or its folded one, or
    /// every region whose key range holds the note).
    let candidateStarts: UnsafePointer<Int32>
    let candidates: UnsafePointer<Int32>
    /// Likewise the regions a note's note-off starts (release samples).
    let releaseCandidateStarts: UnsafePointer<Int32>
    let releaseCandidates: UnsafePointer<Int32>
    /// The regions' controller ranges (`RegionSlot.controllerRangeStart`).
    let controllerRangeNumbers: UnsafePointer<Int32>
    let controllerRangeLows: UnsafePointer<UInt8>
    let controllerRangeHighs: UnsafePointer<UInt8>
    /// Per note: whether any of its regions in any set is damped (its note-off changes what
    /// sounds, whichever set struck it). Per set and note (128 s + n): whether any chokes.
    let noteDamps: UnsafePointer<Bool>
    let noteChokes: UnsafePointer<Bool>
    /// Per set and note (128 s + n): the note whose pitch its regions play at (itself, or the
    /// note a set that folds unmapped notes moves it to).
    let soundsAs: UnsafePointer<UInt8>
    /// Per region and key in its range: the 32.32 playback increment and the kernel level
    /// (-1: the sample's own pitch).
    let increments: UnsafePointer<UInt64>
    let incrementKernels: UnsafePointer<Int32>
    /// The interpolation kernels' levels (the engine keeps the kernels alive).
    let kernelLevels: UnsafePointer<KernelLevel>
    let kernelLevelCount: Int
    /// Whether any region is pitched.
    let hasPitched: Bool
    /// Per region r and velocity v, at 128r + v: the strike's gain.
    let velocityGains: UnsafePointer<Float>
    /// Velocity timbre: for region r and velocity v, the voice's low-pass coefficient at 128r + v
    /// (1: open). Only made when the instrument asks for it (`hasTimbre`; one entry otherwise).
    let timbreTable: UnsafePointer<Float>
    let hasTimbre: Bool
    /// Whether any region is off the centre (if not, no voice is checked for it).
    let hasPannedKeys: Bool
    /// Whether any region has a send of its own (`RegionSlot.reverbSend`; if not, no voice is
    /// checked for one).
    let hasVoiceSends: Bool
    /// `Instrument.followsPanController` (of any set).
    let followsPanController: Bool
    /// The SoundFont convex curve at 128 points (`convexCurve()`), for the modulation envelope.
    let convexCurve: UnsafePointer<Double>
    /// The regions' note-on modulators (`RegionSlot.modulatorStart`).
    let noteModulators: NoteModulatorTable
    /// Per region: its modulation's envelopes and LFOs by sfizz's rules (an SFZ region's;
    /// `ModulationTicks.sfz`), unread for any other.
    let sfzModulations: UnsafePointer<SFZModulationRates>

    /// The table of `setList`'s regions as `layout` lists them, read through `kernels`, at the
    /// output's `sampleRate`. Thread: control.
    /// - Precondition: every region's `sampleIndex` is valid in `bank`.
    init(
        _ setList: InstrumentSets, layout: RegionLayout, bank: SampleBank, kernels: InterpolationKernels,
        sampleRate: Int
    ) {
        regionCount = layout.regions.count
        setCount = setList.sets.count
        followsProgramChange = setList.followsProgramChange
        selectsAsSoundFont = setList.programSelection == .soundFont
        drumChannel = setList.drumChannel ?? -1
        fontPrograms = storedCopy(selectsAsSoundFont ? setList.soundFontChoices() : [], padding: -1)
        let storedRegions = max(regionCount, 1)
        let setSlots = UnsafeMutablePointer<SetSlot>.allocate(capacity: setCount)
        setSlots.initialize(from: Engine.setSlots(setList), count: setCount)
        sets = UnsafePointer(setSlots)
        kernelLevels = UnsafePointer(kernels.levels)
        kernelLevelCount = kernels.levelCount
        let allIncrements = layout.increments
        let increments = UnsafeMutablePointer<UInt64>.allocate(capacity: max(allIncrements.count, 1))
        let incrementKernels = UnsafeMutablePointer<Int32>.allocate(capacity: max(allIncrements.count, 1))
        for (i, increment) in allIncrements.enumerated() {
            increments[i] = increment
            incrementKernels[i] = increment == 1 << 32 ? -1 : Int32(kernels.level(increment: increment))
        }
        (self.increments, self.incrementKernels) = (UnsafePointer(increments), UnsafePointer(incrementKernels))
        let regions = UnsafeMutablePointer<RegionSlot>.allocate(capacity: storedRegions)
        let built = Engine.regionSlots(
            layout.regions, setOfRegion: layout.setOfRegion, setList: setList, bank: bank, increments: allIncrements,
            bases: layout.bases, sampleRate: sampleRate)
        var slots = built.slots
        noteModulators = NoteModulatorTable(layout.regions, placing: &slots, sampleRate: sampleRate)
        for (i, slot) in slots.enumerated() { (regions + i).initialize(to: slot) }
        self.regions = UnsafePointer(regions)
        hasPitched = built.anyPitched
        hasPannedKeys = built.anyOffCentre
        hasVoiceSends = slots.contains { $0.reverbSend != 0 }
        controllerRangeNumbers = storedCopy(built.rangeNumbers, padding: 0)
        controllerRangeLows = storedCopy(built.rangeLows, padding: 0)
        controllerRangeHighs = storedCopy(built.rangeHighs, padding: 127)
        let tables = Engine.candidateTables(
            setList, setBases: layout.setBases, damps: built.damps, chokes: layout.regions.map { $0.group != 0 })
        (candidateStarts, candidates) = (UnsafePointer(tables.starts), UnsafePointer(tables.list))
        (releaseCandidateStarts, releaseCandidates) = (
            UnsafePointer(tables.releaseStarts), UnsafePointer(tables.releaseList)
        )
        (noteDamps, noteChokes, soundsAs) = (
            UnsafePointer(tables.noteDamps), UnsafePointer(tables.noteChokes), UnsafePointer(tables.soundsAs)
        )
        hasTimbre = Self.hasTimbre(setList)
        followsPanController = setList.sets.contains { $0.instrument.followsPanController }
        let gains = Self.strikeGains(setList, layout: layout, sampleRate: sampleRate)
        (velocityGains, timbreTable) = (UnsafePointer(gains.velocity), UnsafePointer(gains.timbre))
        let curve = UnsafeMutablePointer<Double>.allocate(capacity: 128)
        curve.initialize(from: BellkeysEngine.convexCurve(), count: 128)
        convexCurve = UnsafePointer(curve)
        sfzModulations = storedCopy(
            layout.regions.map { region in
                guard let m = region.modulation, m.rules == .sfz else { return SFZModulationRates() }
                return SFZModulationRates(m, sampleRate: sampleRate)
            }, padding: SFZModulationRates())
    }

    /// Per region r and velocity v, at 128r + v: the strike's gain (the region's own velocity
    /// gains, else its set's curve), and the velocity-timbre low-pass coefficient (1: open).
    /// Thread: control.
    static func strikeGains(_ setList: InstrumentSets, layout: RegionLayout, sampleRate: Int)
        -> (velocity: UnsafeMutablePointer<Float>, timbre: UnsafeMutablePointer<Float>)
    {
        let storedRegions = max(layout.regions.count, 1)
        let velocityGains = UnsafeMutablePointer<Float>.allocate(capacity: 128 * storedRegions)
        // (Read only when a set has velocity timbre, `hasTimbre`: one entry otherwise.)
        let timbreCount = Self.hasTimbre(setList) ? storedRegions * 128 : 1
        let timbreTable = UnsafeMutablePointer<Float>.allocate(capacity: timbreCount)
        timbreTable.initialize(repeating: 1, count: timbreCount)
        for (r, region) in layout.regions.enumerated() {
            let own = setList.sets[layout.setOfRegion[r]].instrument
            for v in 0..<128 {
                velocityGains[128 * r + v] = region.velocityGains?[v] ?? own.velocityCurve.gain(velocity: v)
                if own.velocityTimbre > 0 {
                    timbreTable[128 * r + v] = timbreCoefficient(
                        note: region.timbreNote ?? region.pitchKeycenter, velocity: v,
                        amount: own.velocityTimbre, sampleRate: sampleRate)
                }
            }
        }
        return (velocityGains, timbreTable)
    }

    /// Whether a set of `setList` has velocity timbre. Thread: control.
    static func hasTimbre(_ setList: InstrumentSets) -> Bool {
        setList.sets.contains { $0.instrument.velocityTimbre > 0 }
    }

    /// Frees what `init` allocated (the kernels' levels are the kernels'). Thread: control.
    func deallocate() {
        regions.deallocate()
        sfzModulations.deallocate()
        sets.deallocate()
        fontPrograms.deallocate()
        candidateStarts.deallocate()
        candidates.deallocate()
        releaseCandidateStarts.deallocate()
        releaseCandidates.deallocate()
        controllerRangeNumbers.deallocate()
        controllerRangeLows.deallocate()
        controllerRangeHighs.deallocate()
        noteDamps.deallocate()
        noteChokes.deallocate()
        soundsAs.deallocate()
        increments.deallocate()
        incrementKernels.deallocate()
        velocityGains.deallocate()
        timbreTable.deallocate()
        convexCurve.deallocate()
        noteModulators.deallocate()
    }
}

/// Every set's regions in one list (set after set), the set of each and each set's first, and
/// their playback increments: what `RegionTable` is built from, and the highest ratio a voice
/// may be played at, which the kernels are made for. Thread: control.
struct RegionLayout {
    let regions: [Region]
    let setOfRegion: [Int]
    let setBases: [Int]
    let increments: [UInt64]
    /// Region r's first increment (for its lowest key) in `increments`.
    let bases: [Int]
    let highestRatio: Double

    /// - Precondition: every region's `sampleIndex` is valid in `bank`.
    init(_ setList: InstrumentSets, bank: SampleBank) {
        (regions, setOfRegion, setBases) = Engine.combinedRegions(setList)
        (increments, bases, highestRatio) = Engine.playbackIncrements(
            regions, setOfRegion: setOfRegion, setList: setList, bank: bank)
    }
}

/// `values` in memory of their own (at least one element: `padding` when there are none), for a
/// table the render thread reads; the table's `deallocate` frees it. Thread: control.
func storedCopy<T>(_ values: [T], padding: T) -> UnsafePointer<T> {
    let stored = UnsafeMutablePointer<T>.allocate(capacity: max(values.count, 1))
    stored.initialize(repeating: padding, count: max(values.count, 1))
    stored.update(from: values, count: values.count)
    return UnsafePointer(stored)
}
