import BellkeysEngine
import BellkeysModel
import Testing

/// `unmappedNotes: fold` for an instrument of regions (an SFZ file's, a SoundFont preset's): a
/// note outside the regions' keys is moved by octaves into them and plays there, at the pitch
/// of the note it folds to, exactly as that note would; its note-off still damps it.
@Suite struct FoldedRegions {
    /// One pitched region over C4..B4 (60...71, the sample's pitch at C4), damped on note-off.
    func engine(_ unmapped: UnmappedNotes) -> Engine {
        let bank = SampleBank(samples: [loopedSine(cycles: 1_000, frames: 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.keyRange = 60...71
        region.pitchKeycenter = 60
        region.loopMode = .continuous
        region.loopEnd = 47_999
        region.noteOff = .damp(releaseSeconds: 0.01)
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [], unmappedNotes: unmapped)
        instrument.regions = [region]
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        e.enqueue(.control(frame: 0, controller: 7, value: 127))
        return e
    }

    func play(_ note: Int, _ unmapped: UnmappedNotes) -> (out: [Float], ignored: Int) {
        let e = engine(unmapped)
        e.enqueue(.noteOn(frame: 100, note: note, velocity: 100))
        e.enqueue(.noteOff(frame: 12_000, note: note))
        let out = render(e, 16_000)
        return (out, e.ignoredNotes.load(ordering: .relaxed))
    }

    @Test(arguments: [(36, 60), (49, 61), (84, 60), (95, 71), (127, 67), (0, 60)])
    func aNoteOutsideSoundsAsTheNoteItFoldsTo(note: Int, folded: Int) {
        let inside = play(folded, .ignore)
        let moved = play(note, .fold)
        #expect(moved.ignored == 0 && inside.ignored == 0)
        #expect(moved.out == inside.out)
        #expect(power(Array(moved.out[200..<11_000])) > 0.01)
        // Damped by its own note-off: silent after the release.
        #expect(moved.out[12_600..<16_000].allSatisfy { $0 == 0 })
    }

    @Test func withoutFoldingItIsLeftOutAndCounted() {
        let left = play(36, .ignore)
        #expect(left.ignored == 1 && left.out.allSatisfy { $0 == 0 })
    }

    @Test func theInstrumentsRangeIsItsRegionsNotItsKeys() {
        var instrument = Instrument(keys: [])
        var low = Region(sampleIndex: 0), high = Region(sampleIndex: 0), release = Region(sampleIndex: 0)
        low.keyRange = 48...59
        high.keyRange = 84...96
        release.keyRange = 20...120
        release.triggersOnRelease = true
        instrument.regions = [low, high, release]
        #expect(instrument.soundingRange == 48...96)
        #expect(
            Instrument(keys: [KeySettings(note: 60, sampleIndex: 0), KeySettings(note: 69, sampleIndex: 0)])
                .soundingRange == 60...69)
        #expect(Instrument(keys: []).soundingRange == nil)
    }

    /// One rule for every instrument: a map's bells beside an instrument's regions fold as one
    /// range (the lowest note anything sounds to the highest), a note inside it that nothing
    /// sounds is left out, and a note outside lands where a bell or a region sounds it.
    @Test func bellsAndRegionsFoldAsOneRange() {
        var instrument = Instrument(
            keys: [KeySettings(note: 84, sampleIndex: 0), KeySettings(note: 86, sampleIndex: 0)], unmappedNotes: .fold)
        var region = Region(sampleIndex: 0)
        region.keyRange = 48...72
        instrument.regions.append(region)
        let table = instrument.soundingNoteForEveryNote()
        #expect(table[30] == 54 && table[40] == 52) // below: onto the region
        #expect(table[110] == 86 && table[108] == 84) // above: onto a bell
        #expect(table[76] == nil && table[80] == nil) // inside, between them: nothing
        #expect(table[90] == nil && table[100] == nil) // lands on 78 and 76: nothing there
        #expect(table[60] == 60 && table[84] == 84)
        instrument.unmappedNotes = .ignore
        #expect(instrument.soundingNoteForEveryNote()[30] == nil)
    }

    /// The same in the engine: beside a bell at C6, a note far below a region over C3..C5
    /// plays the region where it lands (A1 on A3), at that note's pitch, exactly as that note
    /// does; without folding it is left out.
    @Test func aNoteBelowBellsAndRegionsPlaysTheRegionWhereItLands() {
        func play(_ note: Int, _ unmapped: UnmappedNotes) -> (out: [Float], ignored: Int) {
            let sine = loopedSine(cycles: 1_000, frames: 48_000)
            let bank = SampleBank(samples: [sine, sine], sampleRate: 48_000)
            var instrument = Instrument(keys: [KeySettings(note: 84, sampleIndex: 0)], unmappedNotes: unmapped)
            var region = Region(sampleIndex: 1)
            region.keyRange = 48...72
            region.pitchKeycenter = 60
            instrument.regions.append(region)
            var config = EngineConfiguration(sampleRate: 48_000)
            config.limiterThreshold = 100
            let e = Engine(bank: bank, instrument: instrument, configuration: config)
            e.enqueue(.noteOn(frame: 100, note: note, velocity: 100))
            let out = render(e, 4_000)
            return (out, e.ignoredNotes.load(ordering: .relaxed))
        }
        let landed = play(57, .ignore), moved = play(33, .fold)
        #expect(moved.ignored == 0 && moved.out == landed.out)
        #expect(power(Array(moved.out[200..<4_000])) > 0.01)
        let left = play(33, .ignore)
        #expect(left.ignored == 1 && left.out.allSatisfy { $0 == 0 })
    }
}
