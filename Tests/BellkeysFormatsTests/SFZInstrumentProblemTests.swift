import BellkeysFormats
import Testing

/// What an SFZ file gets wrong: warned once, or refused with its place and the fix.
@Suite struct SFZInstrumentProblems {
    /// Each unsupported opcode once, at its first place, in file order; <curve> and spec
    /// headers bellkeys does not play once each; set_ccN kept, label_ccN accepted.
    @Test func warningsOncePerNameInFileOrder() throws {
        let sfz = try parseSFZText(
            """
            <control> set_cc7=100 set_cc64=127 label_cc7=Volume label_cc1=Wheel
            <global> group_label=Bells lochan=1 hichan=2
            <group> group_label=Two ampeg_dynamic=1 amplitude_oncc1=50
            <curve> curve_index=1 v000=0 v127=1
            <curve> curve_index=2 v064=0.5
            <effect> type=lofi bus=main
            <region> sample=a.wav region_label=x amp_velcurve_64=0.5 default_path=x lochan=3 locc200=1
            """)
        #expect(
            sfz.warnings.map(\.description) == [
                "bells.sfz:1:36: label_cc7 accepted, no effect",
                "bells.sfz:1:53: label_cc1 accepted, no effect",
                "bells.sfz:2:10: unsupported opcode group_label, ignored",
                "bells.sfz:2:28: unsupported opcode lochan, ignored",
                "bells.sfz:2:37: unsupported opcode hichan, ignored",
                "bells.sfz:3:25: ampeg_dynamic accepted, no effect",
                "bells.sfz:3:41: unsupported opcode amplitude_oncc1, ignored",
                "bells.sfz:4:1: <curve> is not supported (no opcode bellkeys plays uses a curve), ignored",
                "bells.sfz:6:1: unsupported header <effect>, its opcodes ignored",
                "bells.sfz:7:23: unsupported opcode region_label, ignored",
                "bells.sfz:7:58: default_path belongs under <control>, ignored here",
                "bells.sfz:7:82: unsupported opcode locc200, ignored",
            ])
        #expect(sfz.controllerDefaults == [7: 100, 64: 127])
        #expect(sfz.regions[0].ampVelcurve.map(\.velocity) == [64] && sfz.regions[0].ccRanges.isEmpty)
    }

    @Test(arguments: [
        ("volume=loud", "\"loud\" is not a number", "write a number from -144 to 48 (dB)"),
        ("volume=49", "49 is out of range", "use a number from -144 to 48 (dB)"),
        ("volume=-4.3dB", "\"-4.3dB\" is not a number", "write a number from -144 to 48 (dB)"),
        ("ampeg_release=-1", "-1 is out of range", "use a number from 0 to 100 (seconds)"),
        ("ampeg_attack=1e999", "1e999 is out of range", "use a number from 0 to 100 (seconds)"),
        ("pan=.", "\".\" is not a number", "write a number from -100 to 100 (percent)"),
        ("tune=2401", "2401 is out of range", "use a number from -2400 to 2400 (cents)"),
        ("lovel=60.5", "\"60.5\" is not a whole number", "write a whole number from 0 to 127"),
        ("hivel=128", "128 is out of range", "use a whole number from 0 to 127"),
        ("offset=-1", "-1 is out of range", "use a whole number from 0 to 2147483647 (frames)"),
        (
            "offset=99999999999999999999", "99999999999999999999 is out of range",
            "use a whole number from 0 to 2147483647 (frames)"
        ),
        ("loop_start=-5", "-5 is out of range", "use a whole number from 0 to 2147483647 (frames)"),
        ("seq_length=0", "0 is out of range", "use a whole number from 1 to 100"),
        ("transpose=1.5", "\"1.5\" is not a whole number", "write a whole number from -127 to 127 (semitones)"),
        ("group=2147483648", "2147483648 is out of range", "use a whole number from -2147483648 to 2147483647"),
        ("cutoff=20001", "20001 is out of range", "use a number from 0 to 20000 (Hz)"),
        ("amp_velcurve_64=2", "2 is out of range", "use a number from 0 to 1"),
        ("locc1=128", "128 is out of range", "use a whole number from 0 to 127"),
        ("ampeg_dynamic=2", "2 is out of range", "use a whole number from 0 to 1"),
        ("pitcheg_depth=12001", "12001 is out of range", "use a number from -12000 to 12000 (cents)"),
        ("fileg_sustain=101", "101 is out of range", "use a number from 0 to 100 (percent)"),
        ("amplfo_freq=-1", "-1 is out of range", "use a number from 0 to 100 (Hz)"),
        ("amplfo_depth=97", "97 is out of range", "use a number from -96 to 96 (dB)"),
        ("fillfo_wave=13", "13 is out of range", "use a whole number from 0 to 12"),
        (
            "loop_mode=loop", "\"loop\" is not one of no_loop, one_shot, loop_continuous, loop_sustain",
            "use one of no_loop, one_shot, loop_continuous, loop_sustain (the values bellkeys plays)"
        ),
        (
            "fil_type=hpf_2p", "\"hpf_2p\" is not one of lpf_1p, lpf_2p",
            "use one of lpf_1p, lpf_2p (the values bellkeys plays)"
        ),
        (
            "trigger=release_key", "\"release_key\" is not one of attack, release, first, legato",
            "use one of attack, release, first, legato (the values bellkeys plays)"
        ),
        (
            "off_mode=slow", "\"slow\" is not one of fast, normal, time",
            "use one of fast, normal, time (the values bellkeys plays)"
        ),
        (
            "xf_velcurve=Power", "\"Power\" is not one of power, gain",
            "use one of power, gain (the values bellkeys plays)"
        ),
    ])
    func badValuesNameTheOpcodeValueAndRange(opcode: String, message: String, fix: String) throws {
        let problems = sfzProblems("<group>\n  \(opcode) //why\n<region> sample=a.wav\n<region> sample=b.wav")
        try #require(problems.count == 1, "\(problems)")
        let name = String(opcode.prefix { $0 != "=" })
        #expect((problems[0].line, problems[0].column) == (2, 4 + name.count))
        #expect(problems[0].path == name)
        #expect(problems[0].message == message)
        #expect(problems[0].fix == fix)
        #expect(problems[0].description == "bells.sfz:2:\(4 + name.count): \(name): \(message)\n    fix: \(fix)")
    }

    @Test func controlValuesAreCheckedToo() {
        let problems = sfzProblems(
            "<control> note_offset=128 octave_offset=-11 set_cc1=200\n<region> sample=a.wav")
        #expect(problems.map(\.path) == ["note_offset", "octave_offset", "set_cc1"])
        #expect(problems.map(\.column) == [23, 41, 53])
        #expect(
            problems.map(\.fix) == [
                "use a whole number from -127 to 127 (semitones)", "use a whole number from -10 to 10 (octaves)",
                "use a whole number from 0 to 127",
            ])
    }

    /// Problems that need the whole region are reported at its header, every one in the file.
    @Test func regionProblemsPointAtTheRegion() {
        let problems = sfzProblems(
            """
            <group> lokey=70
            <region> hikey=60 sample=a.wav
            <region> lovel=100 hivel=99 sample=a.wav
            <region>  lokey=1
            <region> locc1=100 hicc1=20 sample=a.wav
            <region> xfin_lovel=10 xfin_hivel=5 sample=a.wav
            <region> xfout_lovel=10 xfout_hivel=5 sample=a.wav
            <region> lorand=0.5 hirand=0.25 sample=a.wav
            <region> amp_velcurve_128=1 sample=a.wav
            """)
        #expect(problems.map(\.line) == [2, 3, 4, 5, 6, 7, 8, 9])
        #expect(problems.map(\.column) == [1, 1, 1, 1, 1, 1, 1, 10])
        #expect(problems.map(\.path) == Array(repeating: "<region>", count: 7) + ["amp_velcurve_128"])
        #expect(
            problems.map(\.message) == [
                "lokey=70 is above hikey=60", "lovel=100 is above hivel=99", "the region has no sample",
                "locc1=100 is above hicc1=20", "xfin_lovel=10 is above xfin_hivel=5",
                "xfout_lovel=10 is above xfout_hivel=5", "lorand=0.5 is above hirand=0.25",
                "amp_velcurve_128: the velocity is out of range",
            ])
        #expect(problems[0].fix == "give lokey <= hikey")
        #expect(
            problems[2].fix == "add sample=FILE.wav to the <region> or its <group> (relative to the .sfz file's folder)"
        )
        #expect(problems[7].fix == "amp_velcurve_N takes a velocity N from 0 to 127")
    }

    @Test func aFileWithoutRegionsIsRefused() throws {
        for text in ["", "\u{FEFF}", "// nothing\n", "<control> default_path=x\n<group> lokey=1"] {
            let problems = sfzProblems(text)
            try #require(problems.count == 1, "\(text)")
            #expect(problems[0].line == nil && problems[0].column == nil && problems[0].path == "")
            #expect(problems[0].message == "the file has no <region>")
            #expect(problems[0].fix == "add a region: <region> sample=FILE.wav lokey=60 hikey=62 pitch_keycenter=61")
            #expect(problems[0].description.hasPrefix("bells.sfz: the file has no <region>"))
        }
    }

    @Test func anOpcodeBeforeAnyHeaderIsRefusedOnce() {
        let problems = sfzProblems("// bells\n\n  lokey=60 hikey=62\n<region> sample=a.wav")
        #expect(problems.count == 1)
        #expect((problems[0].line, problems[0].column, problems[0].path) == (3, 3, "lokey"))
        #expect(problems[0].message == "lokey= comes before any header")
        #expect(problems[0].fix.hasPrefix("put it under a header: <control> for default_path"))
    }

    @Test func unknownHeaderIsRefused() {
        let problems = sfzProblems("<region> sample=a.wav\n  <regoin> sample=b.wav")
        #expect(problems.count == 1)
        #expect((problems[0].line, problems[0].column, problems[0].path) == (2, 3, ""))
        #expect(problems[0].message == "unknown header <regoin>")
        #expect(problems[0].fix == "headers are <control>, <global>, <master>, <group>, <region> and <curve>")
    }
}
