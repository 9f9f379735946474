import BellkeysFormats
import Testing

@Suite struct SFZInstrumentReading {
    @Test func vscoTubularBellsResolves() throws {
        #expect(vscoTubularBells.utf8.count == 621)
        let sfz = try parseSFZText(vscoTubularBells, file: "TubularBells.sfz")
        func bell(_ line: Int, _ name: String, _ keys: ClosedRange<Int>, _ centre: Int, _ volume: Double) -> SFZRegion {
            region(at(line, 1, "TubularBells.sfz"), "Percussion/" + name, at(line + 1, 8, "TubularBells.sfz")) {
                ($0.loKey, $0.hiKey, $0.pitchKeycenter, $0.volume) = (keys.lowerBound, keys.upperBound, centre, volume)
                ($0.ampegAttack, $0.ampegRelease) = (0.001, 15)
            }
        }
        #expect(
            sfz.regions == [
                bell(46, "TB_hit_F5_v3_rr1.wav", 75...79, 77, 16), bell(56, "TB_hit_C4_v4_rr1.wav", 60...63, 60, 6),
                bell(66, "TB_hit_C5_v4_rr1.wav", 70...74, 72, 6), bell(76, "TB_hit_G4_v4_rr1.wav", 64...69, 67, 6),
            ])
        #expect(
            sfz.warnings.map(\.description) == [
                "TubularBells.sfz:18:1: ampeg_dynamic accepted, no effect",
                "TubularBells.sfz:39:1: unsupported opcode group_label, ignored",
            ])
        #expect(sfz.includedFiles == [] && sfz.controllerDefaults == [:])
    }

    @Test func vscoGlockenspielResolves() throws {
        #expect(vscoGlockenspiel.utf8.count == 790)
        let sfz = try parseSFZText(vscoGlockenspiel, file: "Glockenspiel.sfz")
        func bar(_ line: Int, _ name: String, _ keys: ClosedRange<Int>, _ centre: Int) -> SFZRegion {
            region(at(line, 1, "Glockenspiel.sfz"), "Percussion/Glock/" + name, at(line + 1, 8, "Glockenspiel.sfz")) {
                ($0.loKey, $0.hiKey, $0.pitchKeycenter, $0.volume) = (keys.lowerBound, keys.upperBound, centre, 8)
                ($0.ampegAttack, $0.ampegRelease) = (0.005, 7)
            }
        }
        #expect(
            sfz.regions == [
                bar(33, "glock_medium_C5.wav", 70...75, 72), bar(43, "glock_medium_C6.wav", 82...87, 84),
                bar(53, "glock_medium_C7.wav", 94...96, 96), bar(63, "glock_medium_G4.wav", 67...69, 67),
                bar(73, "glock_medium_G5.wav", 76...81, 79), bar(83, "glock_medium_G6.wav", 88...93, 91),
            ])
        #expect(sfz.warnings.map(\.description) == ["Glockenspiel.sfz:18:1: ampeg_dynamic accepted, no effect"])
    }

    @Test func vcslShapedFileResolves() throws {
        let sfz = try parseSFZText(vcslShaped, file: "Idiophones/Hand Bells.sfz")
        func layer(_ line: Int, _ sampleLine: Int, _ name: String, _ change: (inout SFZRegion) -> Void) -> SFZRegion {
            region(
                at(line, 1, "Idiophones/Hand Bells.sfz"), "Hand Bells 1/" + name,
                at(sampleLine, 8, "Idiophones/Hand Bells.sfz")
            ) {
                ($0.loKey, $0.hiKey, $0.pitchKeycenter) = (65, 67, 66)
                ($0.ampegAttack, $0.ampegRelease) = (0.004, 30)
                change(&$0)
            }
        }
        #expect(
            sfz.regions == [
                layer(7, 10, "handbell_F#4_p_rr1.wav") {
                    ($0.xfoutLoVel, $0.xfoutHiVel, $0.tune, $0.volume) = (0, 83, -19, 14.124176)
                },
                layer(17, 22, "handbell_F#4_mf_rr2.wav") {
                    ($0.xfinLoVel, $0.xfinHiVel, $0.xfoutLoVel, $0.xfoutHiVel) = (0, 83, 84, 127)
                    ($0.offset, $0.volume) = (135, -0.566385)
                },
                layer(29, 32, "handbell_F#4_ff_rr1.wav") {
                    ($0.xfinLoVel, $0.xfinHiVel, $0.volume) = (84, 127, -4.305226)
                },
                layer(38, 39, "handbell_G#4_ff_rr1.wav") {
                    ($0.loKey, $0.hiKey, $0.pitchKeycenter, $0.tune, $0.volume) = (68, 70, 68, 16, 30.736268)
                },
            ])
        #expect(sfz.warnings == [])
    }

    /// <global> → <master> → <group> → <region>, later overriding earlier; <global> clears
    /// master and group, <master> clears group, <group> replaces the group's opcodes.
    @Test func headersInheritAndReset() throws {
        let sfz = try parseSFZText(
            """
            <global> ampeg_release=2 pan=10 volume=-1 sample=g.wav
            <master> ampeg_release=3 transpose=1
            <group> ampeg_release=4 tune=5
            <region> lokey=60 hikey=60
            <region> ampeg_release=5 pan=-20 sample=r.wav
            <group> offset=7
            <region>
            <master> cutoff=500
            <region>
            <global> volume=-2
            <region> sample=last.wav
            """)
        let g = at(1, 50)
        #expect(
            sfz.regions == [
                region(at(4, 1), "g.wav", g) {
                    ($0.loKey, $0.hiKey, $0.ampegRelease, $0.pan, $0.volume) = (60, 60, 4, 10, -1)
                    ($0.transpose, $0.tune) = (1, 5)
                },
                region(at(5, 1), "r.wav", at(5, 41)) {
                    ($0.ampegRelease, $0.pan, $0.volume, $0.transpose, $0.tune) = (5, -20, -1, 1, 5)
                },
                region(at(7, 1), "g.wav", g) {
                    ($0.ampegRelease, $0.pan, $0.volume, $0.transpose, $0.offset) = (3, 10, -1, 1, 7)
                },
                region(at(9, 1), "g.wav", g) { ($0.ampegRelease, $0.pan, $0.volume, $0.cutoff) = (2, 10, -1, 500) },
                region(at(11, 1), "last.wav", at(11, 17)) { $0.volume = -2 },
            ])
    }

    @Test func volumesOfEveryLevelAddUp() throws {
        let sfz = try parseSFZText(
            """
            <global> global_volume=-6 volume=1
            <master> master_volume=-3.5
            <group> group_volume=2 volume=30.7
            <region> sample=a.wav
            <region> sample=b.wav volume=-10
            """)
        let levels: Double = -6 + -3.5 + 2
        #expect(sfz.regions.map(\.volume) == [30.7 + levels, -10 + levels])
    }

    /// default_path applies to the regions after it, a new <control> clears it; note_offset and
    /// octave_offset move keys, centres and keyswitches, clamped to 0...127.
    @Test func controlSetsPathsAndOffsets() throws {
        let sfz = try parseSFZText(
            #"""
            <control> default_path= Tubular Bells\Soft\  note_offset=2 octave_offset=-1
            <region> sample= Hits\F#3 hit.wav  lokey=c4 hikey=62 pitch_keycenter=61 sw_last=c0 sw_lokey=0 sw_hikey=c#0 sw_default=b0
            <region> sample=/abs/x.wav key=127
            <control> octave_offset=1
            <region> sample=y.wav key=d9 pitch_keycenter=sample
            """#)
        #expect(
            sfz.regions.map(\.sample) == [
                "Tubular Bells/Soft/Hits/F#3 hit.wav", "Tubular Bells/Soft//abs/x.wav", "y.wav",
            ])
        #expect(sfz.regions.map(\.loKey) == [50, 117, 127])
        #expect(sfz.regions.map(\.hiKey) == [52, 117, 127])
        #expect(sfz.regions.map(\.pitchKeycenter) == [51, 117, nil])
        #expect(sfz.regions[0].sampleLocation == at(2, 18))
        #expect(
            [sfz.regions[0].swLast, sfz.regions[0].swLoKey, sfz.regions[0].swHiKey, sfz.regions[0].swDefault] == [
                2, 0, 3, 13,
            ])
        #expect(sfz.regions[1].swLast == nil)
    }

    /// key= sets both ends and the centre; whichever of key= and pitch_keycenter= comes last wins.
    @Test func keySetsTheCentre() throws {
        let sfz = try parseSFZText(
            """
            <region> sample=a.wav pitch_keycenter=50 key=64
            <region> sample=a.wav key=64 pitch_keycenter=50
            <group> key=a4
            <region> sample=a.wav
            """)
        #expect(
            sfz.regions.map { [$0.loKey, $0.hiKey, $0.pitchKeycenter] } == [
                [64, 64, 64], [64, 64, 50], [69, 69, 69],
            ])
    }

    @Test(arguments: [
        ("c4", 60), ("C4", 60), ("c#3", 49), ("Db4", 61), ("DB4", 61), ("f♯2", 42), ("e♭5", 75), ("c-1", 0),
        ("g9", 127), ("bb-1", 10), ("a#0", 22), ("60", 60), ("0", 0), ("+5", 5),
    ])
    func noteNamesAndNumbers(text: String, note: Int) throws {
        let sfz = try parseSFZText("<region> sample=a.wav lokey=\(text)")
        #expect(sfz.regions[0].loKey == note)
    }

    @Test(arguments: [
        "e#4", "b#3", "cb4", "fb2", "c##4", "h4", "c", "c10", "c-2", "g#9", "128", "-1", "c+4", "60a", "c 4",
    ])
    func badNotesAreRefused(text: String) throws {
        let problems = sfzProblems("<region> sample=a.wav\nlokey=\(text)")
        let p = try #require(problems.first, "accepted \(text)")
        #expect((p.line, p.column, p.path) == (2, 7, "lokey"))
        #expect(p.message == (Int(text) != nil ? "\(text) is out of range" : "\"\(text)\" is not a note"))
        #expect(p.fix == "use a note number from 0 to 127 or a name like c4 (60), c#4 or db4")
        #expect(problems.count == 1)
    }

    /// Every opcode bellkeys reads, set away from its default, lands in its field.
    @Test func everyOpcodeLandsInItsField() throws {
        let sfz = try parseSFZText(
            """
            <region> sample=a.wav lokey=1 hikey=2 lovel=3 hivel=4 pitch_keycenter=5 pitch_keytrack=-50.5
            pitch=7.25 transpose=-3 volume=-12 pan=-100 ampeg_delay=0.1 ampeg_attack=0.2 ampeg_hold=0.3
            ampeg_decay=0.4 ampeg_sustain=55 ampeg_release=0.6 amp_veltrack=-100 amp_velcurve_127=1
            amp_velcurve_64=0.25 amp_velcurve_1=0.001 amp_velcurve_64=0.5 offset=2147483647 loopmode=one_shot
            loopstart=10 loopend=99999999999999 fil_type=lpf_1p cutoff=1200.5 resonance=3 fil_veltrack=-9600
            fil_keytrack=1200 seq_length=3 seq_position=2 lorand=0.25 hirand=0.5 xfin_lovel=1 xfin_hivel=2
            xfout_lovel=3 xfout_hivel=4 xf_velcurve=gain sw_lokey=c1 sw_hikey=d1 sw_last=c#1 sw_default=24
            locc1=10 hicc1=20 locc64=64 hicc7=100 trigger=release group=-2147483648 off_by=2147483647
            off_time=1.5 off_mode=normal bend_up=1200 bend_down=-1200
            <region> sample=b.wav tune=-2400 loop_mode=loop_sustain loop_start=0 loop_end=1 trigger=first
            <region> sample=c.wav loop_mode=loop_continuous trigger=legato ampeg_sustain=0
            <region> sample=d.wav loop_mode=no_loop cutoff=0
            """)
        let r = sfz.regions[0]
        #expect([r.loKey, r.hiKey, r.loVel, r.hiVel, r.pitchKeycenter, r.transpose] == [1, 2, 3, 4, 5, -3])
        #expect([r.pitchKeytrack, r.tune, r.volume, r.pan] == [-50.5, 7.25, -12, -100])
        #expect(
            [r.ampegDelay, r.ampegAttack, r.ampegHold, r.ampegDecay, r.ampegSustain, r.ampegRelease] == [
                0.1, 0.2, 0.3, 0.4, 55, 0.6,
            ])
        #expect(r.ampVeltrack == -100)
        #expect(r.ampVelcurve.map(\.velocity) == [1, 64, 127] && r.ampVelcurve.map(\.gain) == [0.001, 0.5, 1])
        #expect(r.offset == 2_147_483_647 && r.loopMode == .oneShot && r.loopStart == 10)
        #expect(r.loopEnd == 2_147_483_647, "clamped like sfizz")
        #expect(r.filterType == .lowPass1 && r.cutoff == 1200.5 && r.resonance == 3)
        #expect(r.filVeltrack == -9600 && r.filKeytrack == 1200)
        #expect(
            [r.seqLength, r.seqPosition, r.xfinLoVel, r.xfinHiVel, r.xfoutLoVel, r.xfoutHiVel] == [3, 2, 1, 2, 3, 4])
        #expect(r.loRand == 0.25 && r.hiRand == 0.5 && r.xfVelcurve == .gain)
        #expect([r.swLoKey, r.swHiKey, r.swLast, r.swDefault] == [24, 26, 25, 24])
        #expect(r.ccRanges == [1: 10...20, 64: 64...127, 7: 0...100])
        #expect(r.trigger == .release && r.group == -2_147_483_648 && r.offBy == 2_147_483_647)
        #expect(r.offMode == .normal && r.offTime == 1.5 && r.bendUp == 1200 && r.bendDown == -1200)
        #expect(sfz.regions.map(\.loopMode) == [.oneShot, .sustain, .continuous, .noLoop])
        #expect(sfz.regions.map(\.trigger) == [.release, .first, .legato, .attack])
        #expect(sfz.regions[1].tune == -2400 && sfz.regions[1].loopStart == 0 && sfz.regions[1].loopEnd == 1)
        #expect(sfz.regions[2].ampegSustain == 0 && sfz.regions[3].cutoff == 0)
        #expect(sfz.warnings == [])
    }

    @Test func defaultsAreTheSpecsAndSfizzs() throws {
        let r = try parseSFZText("<region> sample=a.wav").regions[0]
        #expect(r == region(at(1, 1), "a.wav", at(1, 17)))
        #expect(
            [r.loKey, r.hiKey, r.loVel, r.hiVel, r.pitchKeycenter, r.transpose, r.offset] == [0, 127, 0, 127, 60, 0, 0])
        #expect(
            [r.pitchKeytrack, r.tune, r.volume, r.pan, r.ampegSustain, r.ampegRelease, r.ampVeltrack] == [
                100, 0, 0, 0, 100, 0.001, 100,
            ])
        #expect(
            [r.ampegDelay, r.ampegAttack, r.ampegHold, r.ampegDecay, r.resonance, r.filVeltrack, r.filKeytrack] == [
                0, 0, 0, 0, 0, 0, 0,
            ])
        #expect(r.ampVelcurve.isEmpty && r.loopMode == nil && r.loopStart == nil && r.loopEnd == nil && r.cutoff == nil)
        #expect(r.filterType == .lowPass2 && r.xfVelcurve == .power && r.trigger == .attack && r.offMode == .fast)
        #expect(
            [r.seqLength, r.seqPosition, r.xfinLoVel, r.xfinHiVel, r.xfoutLoVel, r.xfoutHiVel, r.group] == [
                1, 1, 0, 0, 127, 127, 0,
            ])
        #expect(r.loRand == 0 && r.hiRand == 1 && r.offTime == 0.006 && r.bendUp == nil && r.bendDown == nil)
        #expect(
            [r.swLoKey, r.swHiKey, r.swLast, r.swDefault, r.offBy] == [nil, nil, nil, nil, nil] && r.ccRanges.isEmpty)
    }

    /// SFZRegion's == is written by hand (the velocity curve's tuples are not Equatable): it
    /// must compare every stored property, so adding one means updating it and this count.
    @Test func equalityComparesEveryField() {
        let r = region(at(1, 1), "a.wav", at(1, 17))
        #expect(Mirror(reflecting: r).children.count == 56)
        var other = r
        other.ampVelcurve = [(velocity: 1, gain: 0.5)]
        #expect(r != other)
        other = r
        other.bendDown = 0
        #expect(r != other)
        other = r
        other.ccRanges = [1: 0...1]
        #expect(r != other)
        #expect(r == region(at(1, 1), "a.wav", at(1, 17)))
    }
}
