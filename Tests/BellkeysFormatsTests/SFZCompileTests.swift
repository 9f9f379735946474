import BellkeysFormats
import BellkeysModel
import Testing

/// The SFZ compile step without a disk: files in memory, samples' facts made up.
@Suite struct SFZCompile {
    func files(_ texts: [String: String]) -> FileFinder {
        .inMemory(texts.mapValues { Array($0.utf8) })
    }

    func compile(_ text: String, more: [String: String] = ["/i/a.wav": "", "/i/b.wav": ""]) throws(InstrumentError)
        -> CompiledSFZ
    {
        try compileSFZ(path: "/i/x.sfz", files: files(more.merging(["/i/x.sfz": text]) { $1 }))
    }

    func problems(_ text: String, more: [String: String] = [:]) -> [String] {
        do {
            _ = try compile(text, more: more)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func aRegionTakesTheFilesRootKeyAndLoop() throws {
        let compiled = try compile("<region> lokey=60 hikey=72 pitch_keycenter=sample sample=a.wav\n")
        #expect(compiled.samples == [SampleRequest(path: "/i/a.wav", keepStereo: true, mayLoop: false)])
        let looped = compiled.instrument(
            facts: [SampleFacts(index: 7, frameCount: 1_000, rootKey: 67, loop: 200...699)], overriding: nil)
        let region = try #require(looped.instrument.regions.first)
        #expect(region.sampleIndex == 7 && region.keyRange == 60...72 && region.pitchKeycenter == 67)
        #expect(region.loopMode == .continuous && region.loopStart == 200 && region.loopEnd == 699)
        #expect(looped.instrument.followsPitchBend && looped.instrument.bellCount == 0)
        let plain = compiled.instrument(facts: [SampleFacts(index: 0, frameCount: 1_000)], overriding: nil)
        let bare = try #require(plain.instrument.regions.first)
        #expect(bare.pitchKeycenter == 60 && bare.loopMode == .noLoop && bare.loopStart == 0 && bare.loopEnd == 999)
    }

    @Test func opcodesWinOverTheFileAndAreClampedToIt() throws {
        let compiled = try compile(
            "<region> key=60 sample=a.wav offset=5000\n"
                + "<region> key=61 sample=A.WAV loop_mode=loop_continuous loop_start=10 loop_end=20\n"
                + "<region> key=62 sample=a.wav trigger=release\n")
        // One file (found ignoring case), looped by a region: its end is not faded.
        #expect(compiled.samples == [SampleRequest(path: "/i/a.wav", keepStereo: true, mayLoop: true)])
        #expect(compiled.sampleOfRegion == [0, 0, 0] && compiled.firstRegionOfSample == [0])
        let regions = compiled.instrument(
            facts: [SampleFacts(index: 3, frameCount: 1_000, loop: 100...900)], overriding: nil
        ).instrument.regions
        #expect(regions.map(\.offset) == [999, 0, 0])
        #expect(regions[1].loopMode == .continuous && regions[1].loopStart == 10 && regions[1].loopEnd == 20)
        // A release sample plays once through.
        #expect(regions[2].triggersOnRelease && regions[2].loopMode == .oneShot)
    }

    @Test func includesAndSamplesAreFoundIgnoringCase() throws {
        let compiled = try compile(
            "#include \"Parts/Bells.SFZ\"\n",
            more: ["/i/parts/bells.sfz": "<region> sample=Percussion/TB_hit.WAV\n", "/i/percussion/tb_hit.wav": ""])
        #expect(compiled.samples.map(\.path) == ["/i/percussion/tb_hit.wav"])
    }

    @Test func eachFileIsAskedForOnceInTheOrderTheRegionsNameIt() throws {
        let compiled = try compile(
            "<region> key=60 sample=b.wav\n<region> key=61 sample=a.wav\n<region> key=62 sample=b.wav\n")
        #expect(compiled.samples.map(\.path) == ["/i/b.wav", "/i/a.wav"])
        #expect(compiled.sampleOfRegion == [0, 1, 0] && compiled.firstRegionOfSample == [0, 1])
        let (instrument, warnings) = compiled.instrument(
            facts: [SampleFacts(index: 5, frameCount: 10), SampleFacts(index: 9, frameCount: 10)], overriding: nil)
        #expect(instrument.regions.map(\.sampleIndex) == [5, 9, 5])
        #expect(instrument.regions.map(\.pitchKeycenter) == [60, 61, 62])
        #expect(warnings.isEmpty)
    }

    @Test func missingFilesAreNamedWhereTheyAreGiven() {
        #expect(
            problems("<region>\nlokey=60 hikey=62\nsample=nowhere/bell.wav\n<region> sample=gone.wav\n") == [
                "/i/x.sfz:3:8: sample: \"nowhere/bell.wav\" (/i/nowhere/bell.wav): no such file\n    fix: check the name; samples are found relative to the SFZ file's folder (with default_path), ignoring case",
                "/i/x.sfz:4:17: sample: \"gone.wav\" (/i/gone.wav): no such file\n    fix: check the name; samples are found relative to the SFZ file's folder (with default_path), ignoring case",
            ])
        do {
            _ = try compileSFZ(path: "/i/none.sfz", files: files([:]))
            Issue.record("a missing SFZ file compiled")
        } catch {
            #expect(
                error.description
                    == "/i/none.sfz: cannot read the SFZ file: No such file or directory\n    fix: check the path (it is taken relative to the current folder)"
            )
        }
    }

    @Test func aSampleThatCannotBeStoredIsNamedAtItsFirstRegion() throws {
        let compiled = try compile(
            "<region> key=60 sample=b.wav\n<region> key=61 sample=a.wav\n<region> key=62 sample=a.wav\n")
        let problem = compiled.problem(sample: 1, SampleError(message: "not a sound file", fix: "convert it"))
        #expect(
            problem.description
                == "/i/x.sfz:2:24: sample: \"a.wav\" (/i/a.wav): not a sound file\n    fix: convert it")
    }

    /// sw_hikey below sw_last (or sw_lokey) used to trap on an upside-down range (found by the
    /// sfz-file fuzz target, kept as regression-keyswitch-range-upside-down).
    @Test func anUpsideDownKeySwitchRangeIsTurnedRoundWithAWarning() throws {
        let facts = [SampleFacts(index: 0, frameCount: 10)]
        let fine = try compile("<region> key=60 sw_lokey=c1 sw_hikey=d1 sw_last=c1 sample=a.wav\n")
            .instrument(facts: facts, overriding: nil)
        #expect(fine.instrument.keyswitchRange == 24...26 && fine.warnings.isEmpty)
        let turned = try compile("<region> key=60 sw_last=c2 sw_hikey=d1 sample=a.wav\n")
            .instrument(facts: facts, overriding: nil)
        #expect(turned.instrument.keyswitchRange == 26...36)
        #expect(
            turned.warnings == [
                "/i/x.sfz:1:1: the key switch range is upside down (from key 36 down to key 26; see sw_lokey, "
                    + "sw_hikey and sw_last): keys 26 to 36 are taken as key switches"
            ])
    }
}
