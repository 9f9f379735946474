import BellkeysModel

// Tables `Engine.init` builds from the sets, on the control thread: which regions a note may
// start in each set, and which rooms the engine holds.

extension Engine {
    /// An engine for one instrument. Thread: control, before rendering starts.
    /// - Precondition: every key's and region's `sampleIndex` is valid in `bank`.
    public convenience init(bank: SampleBank, instrument: Instrument, configuration: EngineConfiguration) {
        self.init(bank: bank, sets: InstrumentSets(instrument), configuration: configuration)
    }

    /// Each channel's controllers (16 × 128) as it starts: its starting set's defaults, else 0.
    static func startingControllers(_ setList: InstrumentSets) -> UnsafeMutablePointer<UInt8> {
        let values = UnsafeMutablePointer<UInt8>.allocate(capacity: 16 * 128)
        values.initialize(repeating: 0, count: 16 * 128)
        for ch in 0..<16 {
            for (number, value) in setList.sets[setList.startingSets[ch]].instrument.controllerDefaults
            where (0...127).contains(number) {
                values[128 * ch + number] = UInt8(max(0, min(127, value)))
            }
        }
        return values
    }
}

/// The note-to-regions lists of every set (`RegionTable.candidateStarts` and the rest).
struct CandidateTables {
    let starts: UnsafeMutablePointer<Int32>
    let list: UnsafeMutablePointer<Int32>
    let releaseStarts: UnsafeMutablePointer<Int32>
    let releaseList: UnsafeMutablePointer<Int32>
    let noteDamps: UnsafeMutablePointer<Bool>
    let noteChokes: UnsafeMutablePointer<Bool>
    /// Per set and note (128 s + n): the note it sounds as, itself unless the set folds it.
    let soundsAs: UnsafeMutablePointer<UInt8>
}

/// `Engine.regionSlots`'s answer: the regions as the render thread reads them, and what the
/// engine keeps of them besides.
struct RegionSlots {
    let slots: [RegionSlot]
    let anyPitched: Bool, anyOffCentre: Bool
    let rangeNumbers: [Int32], rangeLows: [UInt8], rangeHighs: [UInt8]
    let damps: [Bool]
}

extension Engine {
    /// Every set's regions in one table, set after set, the set of each, and each set's first.
    /// The sets but channel 1's starting set have their volume against that set's (the master
    /// volume) in their regions' gains. Thread: control.
    static func combinedRegions(_ setList: InstrumentSets) -> (regions: [Region], setOfRegion: [Int], setBases: [Int]) {
        let reference = setList.startingSets[0]
        let master = setList.sets[reference].instrument.masterVolumeDecibels
        var allRegions: [Region] = [], setOfRegion: [Int] = [], setBases: [Int] = []
        for (k, set) in setList.sets.enumerated() {
            setBases.append(allRegions.count)
            var own = set.instrument.regions
            if k != reference, set.instrument.masterVolumeDecibels != master {
                let gain = linearGain(decibels: set.instrument.masterVolumeDecibels - master)
                for i in own.indices { own[i].gain *= gain }
            }
            allRegions += own
            setOfRegion += own.map { _ in k }
        }
        return (allRegions, setOfRegion, setBases)
    }

    /// The render thread's view of each set (`RegionTable.sets`). Thread: control.
    static func setSlots(_ setList: InstrumentSets) -> [SetSlot] {
        setList.sets.map { set in
            let own = set.instrument
            return SetSlot(
                program: set.program, bank: set.bank ?? -1,
                keyswitchLow: own.keyswitchRange?.lowerBound ?? 128,
                keyswitchHigh: own.keyswitchRange?.upperBound ?? -1,
                followsPitchBend: own.followsPitchBend, pitchBendReach: own.pitchBendReach,
                restrikeReleases: own.restrikeReleases,
                chokesWithinChannel: own.chokesWithinChannel)
        }
    }

    /// Per region and key in its range, the 32.32 playback increment (from `bases[r]` for
    /// region r), and the highest ratio a voice may be played at: a bend may take a voice up to
    /// two octaves higher (the largest RPN 0 range), or as far as a region's own range goes (the
    /// kernels stop at 256 taps whatever it asks). Thread: control.
    /// - Precondition: every region's `sampleIndex` is valid in `bank`.
    static func playbackIncrements(
        _ allRegions: [Region], setOfRegion: [Int], setList: InstrumentSets, bank: SampleBank
    ) -> (increments: [UInt64], bases: [Int], highestRatio: Double) {
        var highestRatio = 1.0
        var allIncrements: [UInt64] = []
        var bases: [Int] = []
        for region in allRegions {
            precondition(region.sampleIndex >= 0 && region.sampleIndex < bank.count)
            bases.append(allIncrements.count)
            for key in region.keyRange {
                // The bank holds its samples at the output's rate (the loader converts them once):
                // the ratio is the pitch's alone.
                let ratio = region.ratio(key: key, sampleRate: 1, outputRate: 1)
                highestRatio = max(highestRatio, ratio)
                allIncrements.append(UInt64(max(1, min(ratio * 4_294_967_296, 1e15)).rounded()))
            }
        }
        if setList.sets.contains(where: \.instrument.followsPitchBend) {
            let ownRange =
                allRegions.indices.filter { setList.sets[setOfRegion[$0]].instrument.followsPitchBend }
                .compactMap { allRegions[$0].bendRangeCents.map { max($0.up, $0.down) } }.max() ?? 0
            highestRatio *= max(4, exp2(min(ownRange, 4_800) / 1200))
        }
        return (allIncrements, bases, highestRatio)
    }

    /// The render thread's view of every region (`RegionTable.regions`), with what the engine asks of
    /// them as a whole: whether any is pitched or off the centre, their controller ranges, and
    /// whether each is damped. Thread: control.
    static func regionSlots(
        _ allRegions: [Region], setOfRegion: [Int], setList: InstrumentSets, bank: SampleBank,
        increments allIncrements: [UInt64],
        bases: [Int], sampleRate: Int
    ) -> RegionSlots {
        let rate = Double(sampleRate)
        var slots: [RegionSlot] = []
        var anyPitched = false, anyOffCentre = false
        var rangeNumbers: [Int32] = [], rangeLows: [UInt8] = [], rangeHighs: [UInt8] = []
        var allDamps: [Bool] = []
        for (i, region) in allRegions.enumerated() {
            let index = region.sampleIndex
            let stereo = bank.channelCounts[index] == 2
            var damp: Bool, release: Double
            switch region.noteOff {
            case .ring: (damp, release) = (false, 0)
            case .damp(let seconds): (damp, release) = (true, seconds)
            }
            if region.envelope != nil { damp = region.loopMode != .oneShot && !region.ignoresNoteOff }
            allDamps.append(damp)
            var (left, right) = stereo ? balanceGains(region.pan) : panGains(region.pan)
            if let gains = region.sideGains { (left, right) = (gains.x, gains.y) }
            let rangeStart = rangeNumbers.count
            for (number, range) in region.controllerRanges.sorted(by: { $0.key < $1.key }) {
                rangeNumbers.append(Int32(number & 127))
                rangeLows.append(UInt8(max(0, min(127, range.lowerBound))))
                rangeHighs.append(UInt8(max(0, min(127, range.upperBound))))
            }
            let keyCount = region.keyRange.count
            let transposed = (0..<keyCount).contains { allIncrements[bases[i] + $0] != 1 << 32 }
            let frameCount = bank.frameCount(of: index)
            let looped = region.loopMode == .continuous || region.loopMode == .sustain
            let loopEnd = max(0, min(region.loopEnd, frameCount - 1))
            let loopStart = max(0, min(region.loopStart, loopEnd))
            let pitched =
                transposed || stereo || region.envelope != nil || looped || region.offset != 0
                || setList.sets[setOfRegion[i]].instrument.followsPitchBend || region.filter != nil
                || region.modulation != nil || region.noteModulators != nil || region.reverbSend != 0
            anyPitched = anyPitched || pitched
            anyOffCentre = anyOffCentre || stereo || left != 1 || right != 1
            let loop: VoiceLoop =
                switch region.loopMode {
                case .noLoop: .none
                case .oneShot: .oneShot
                case .continuous: .continuous
                case .sustain: .sustain
                }
            var slot =
                RegionSlot(
                    frames: bank.frames(of: index), frameCount: frameCount, isStereo: stereo,
                    gain: region.gain * bank.scales[index], damp: damp,
                    releaseFrames: max(1, Int((release * rate).rounded())),
                    group: region.group, offBy: region.offBy, offReleases: region.offReleases,
                    offFrames: region.offFadeSeconds.map { max(1, Int(($0 * rate).rounded())) } ?? 0,
                    heldKeys: region.heldKeys == .first ? 1 : (region.heldKeys == .legato ? 2 : 0),
                    hasBendRange: region.bendRangeCents != nil, bendUpCents: region.bendRangeCents?.up ?? 0,
                    bendDownCents: region.bendRangeCents?.down ?? 0,
                    sequenceLength: Int32(max(1, region.sequenceLength)),
                    sequencePosition: Int32(region.sequencePosition),
                    randomLow: region.randomLow, randomHigh: region.randomHigh >= 1 ? 2 : region.randomHigh,
                    keyswitch: region.keyswitch ?? -1,
                    controllerRangeStart: rangeStart, controllerRangeCount: region.controllerRanges.count,
                    leftGain: left, rightGain: right, isCentred: !stereo && left == 1 && right == 1,
                    keyLow: region.keyRange.lowerBound, keyHigh: region.keyRange.upperBound,
                    velocityLow: region.velocityRange.lowerBound, velocityHigh: region.velocityRange.upperBound,
                    isPitched: pitched, incrementBase: bases[i],
                    hasEnvelope: region.envelope != nil,
                    envelope: region.envelope.map { EnvelopeFrames($0, sampleRate: sampleRate) }
                        ?? EnvelopeFrames(),
                    offset: max(0, min(region.offset, frameCount - 1)),
                    loop: looped && loopEnd > loopStart ? loop : (loop.is(.oneShot) ? .oneShot : .none),
                    loopStart: loopStart, loopEnd: loopEnd,
                    filterKind: region.filter == nil ? 0 : (region.filter == .lowPass1 ? 1 : 2),
                    cutoff: region.cutoff,
                    filterQ: 0.707_106_781_186_547_5 * exp2(region.resonance / 20 * 3.321_928_094_887_362_3),
                    filterVelocityCents: region.filterVelocityCents, filterKeytrackCents: region.filterKeytrackCents,
                    pitchKeycenter: region.pitchKeycenter, set: setOfRegion[i])
            slot.holdsInDelay = !(region.envelope?.readsInDelay ?? true)
            slot.pitchFraction = region.pitchCentsFraction
            slot.reverbSend = region.reverbSend
            if let t = region.envelope?.timecents {
                slot.hasTimedEnvelope = true
                slot.envelopeTimecents = SIMD8(t.delay, t.attack, t.hold, t.decay, t.sustainCentibels, t.release, 0, 0)
            }
            if let modulation = region.modulation {
                slot.hasModulation = true
                slot.modulation = ModulationTicks(modulation, sampleRate: sampleRate)
                if let t = modulation.envelope.timecents {
                    slot.hasTimedModulation = true
                    slot.modulationTimecents = SIMD8(
                        t.delay, t.attack, t.hold, t.decay, t.sustainCentibels, t.release, 0, 0)
                }
            }
            slots.append(slot)
        }
        return RegionSlots(
            slots: slots, anyPitched: anyPitched, anyOffCentre: anyOffCentre, rangeNumbers: rangeNumbers,
            rangeLows: rangeLows, rangeHighs: rangeHighs, damps: allDamps)
    }

    /// Candidates, set by set: every region whose key range holds the note, those that a
    /// note-off starts (release samples) apart. A set that folds unmapped notes gives a note
    /// it does not sound the candidates of the note it folds to
    /// (`Instrument.soundingNoteForEveryNote`), and `soundsAs` names that note, at whose pitch
    /// its regions then play. `setBases`: each set's first region in the engine's table;
    /// `damps`, `chokes`: per region of that table. Thread: control.
    static func candidateTables(_ setList: InstrumentSets, setBases: [Int], damps: [Bool], chokes: [Bool])
        -> CandidateTables
    {
        let setCount = setList.sets.count
        var lists = [[Int32]](repeating: [], count: 128 * setCount)
        var releaseLists = [[Int32]](repeating: [], count: 128 * setCount)
        for (k, set) in setList.sets.enumerated() {
            for (r, region) in set.instrument.regions.enumerated() {
                for note in region.keyRange where (0...127).contains(note) {
                    let index = Int32(setBases[k] + r)
                    if region.triggersOnRelease {
                        releaseLists[128 * k + note].append(index)
                    } else {
                        lists[128 * k + note].append(index)
                    }
                }
            }
        }
        let soundsAs = UnsafeMutablePointer<UInt8>.allocate(capacity: 128 * setCount)
        for i in 0..<(128 * setCount) { soundsAs[i] = UInt8(i % 128) }
        for (k, set) in setList.sets.enumerated() where set.instrument.unmappedNotes == .fold {
            for (note, sounding) in set.instrument.soundingNoteForEveryNote().enumerated() {
                guard let folded = sounding, folded != note else { continue }
                lists[128 * k + note] = lists[128 * k + folded]
                releaseLists[128 * k + note] = releaseLists[128 * k + folded]
                soundsAs[128 * k + note] = UInt8(folded)
            }
        }
        func flatten(_ lists: [[Int32]]) -> (UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>) {
            let starts = UnsafeMutablePointer<Int32>.allocate(capacity: 129 * setCount)
            let flat = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, lists.reduce(0) { $0 + $1.count }))
            var next = 0
            for k in 0..<setCount {
                for note in 0..<128 {
                    starts[129 * k + note] = Int32(next)
                    for r in lists[128 * k + note] {
                        flat[next] = r
                        next += 1
                    }
                }
                starts[129 * k + 128] = Int32(next)
            }
            return (starts, flat)
        }
        let (starts, list) = flatten(lists)
        let (releaseStarts, releaseList) = flatten(releaseLists)
        // Per note: whether a note-off changes what sounds (a region of the note, in any set, is
        // damped or has a release sample); per set and note: whether a region chokes.
        let noteDamps = UnsafeMutablePointer<Bool>.allocate(capacity: 128)
        noteDamps.initialize(repeating: false, count: 128)
        let noteChokes = UnsafeMutablePointer<Bool>.allocate(capacity: 128 * setCount)
        for i in 0..<(128 * setCount) {
            if lists[i].contains(where: { damps[Int($0)] }) || !releaseLists[i].isEmpty { noteDamps[i % 128] = true }
            noteChokes[i] = lists[i].contains { chokes[Int($0)] }
        }
        return CandidateTables(
            starts: starts, list: list, releaseStarts: releaseStarts, releaseList: releaseList, noteDamps: noteDamps,
            noteChokes: noteChokes, soundsAs: soundsAs)
    }

    /// The rooms an engine holds: each set's own (all the dry ones are one), then, for a live
    /// session (`roomsToChoose`), every preset at each set's mix, as far as `maximumRooms`
    /// allows. Returns them, each set's room among them, and each set's mix (the default mix
    /// for a dry set). The loader refuses a map of more than `maximumRooms` rooms; should a room
    /// chosen for every set (`--reverb`, `r`) at their several mixes still make more, a set
    /// beyond them rings in the first room of the same preset (at another mix). Thread: control.
    static func roomTable(_ setList: InstrumentSets, roomsToChoose: Bool)
        -> (rooms: [ReverbSettings], setRooms: [Int], mixes: [Double])
    {
        let mixes = setList.sets.map { $0.instrument.reverb.mix }
        var distinct: [ReverbSettings] = []
        var setRooms: [Int] = []
        for set in setList.sets {
            let wanted = set.instrument.reverb.asRoom
            if let known = distinct.firstIndex(of: wanted) {
                setRooms.append(known)
            } else if distinct.count < maximumRooms {
                distinct.append(wanted)
                setRooms.append(distinct.count - 1)
            } else {
                setRooms.append(distinct.firstIndex { $0.preset == wanted.preset } ?? distinct.count - 1)
            }
        }
        if roomsToChoose {
            for mix in mixes {
                for preset in ReverbPreset.allCases where distinct.count < maximumRooms {
                    let settings = ReverbSettings(preset: preset, mix: mix).asRoom
                    if !distinct.contains(settings) { distinct.append(settings) }
                }
            }
        }
        return (distinct, setRooms, mixes)
    }
}

extension Engine {
    /// Frees every table and buffer the engine allocated (its deinit). Thread: control.
    func releaseStorage() {
        table.deallocate()
        midi.deallocate()
        pool.deallocate()
        mixer.deallocate()
    }
}
