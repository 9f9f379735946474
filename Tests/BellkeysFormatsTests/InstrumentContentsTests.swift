import BellkeysFormats
import BellkeysModel
import Testing

/// What an instrument holds, in the words of the start-up line, `check` and a set's choice.
@Suite struct InstrumentContents {
    @Test func bellsAreCountedAsBells() {
        let bells = Instrument(keys: (60...72).map { KeySettings(note: $0, sampleIndex: $0 - 60) })
        #expect(bells.contentsText == "13 bells (C4..C5)")
        #expect(bells.playableRange == 60...72)
        #expect(Instrument(keys: []).contentsText == "0 bells")
    }

    @Test func regionsAreCountedWithoutTheKeysAndSamplesWithThem() {
        var low = Region(sampleIndex: 0), high = Region(sampleIndex: 0), release = Region(sampleIndex: 1)
        low.keyRange = 55...71
        high.keyRange = 72...96
        release.keyRange = 40...96
        release.triggersOnRelease = true
        let regions = Instrument(regions: [low, high, release])
        #expect(regions.contentsText == "3 regions, 2 samples (E2..C7)")
        // A map's key beside them: the key's sample counts, the key is no region.
        var both = Instrument(keys: [KeySettings(note: 100, sampleIndex: 2)])
        both.regions.append(low)
        #expect(both.contentsText == "1 region, 2 samples (G3..E7)")
    }
}
