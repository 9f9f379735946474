import BellkeysFormats
import Foundation
import Testing

/// MIDI files as users bring them: notes beyond the bells, drums, one channel of many, format 2,
/// a cut last End-of-Track, and numbers typed with a minus sign.
@Suite struct MIDIFilesAsUsersBringThem {
    func noteOn(_ channel: UInt8, _ note: UInt8) -> [UInt8] { [0x90 | channel, note, 100] }
    func noteOff(_ channel: UInt8, _ note: UInt8) -> [UInt8] { [0x80 | channel, note, 0] }

    func write(_ bytes: [UInt8], _ name: String, in folder: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + name))
    }

    func bytes(_ folder: String, _ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
    }

    /// A song over three octaves on channel 1: C3 D4 E5 G4 C6.
    func song(channel: UInt8 = 0) -> [UInt8] {
        makeMIDIFile(
            ticksPerQuarter: 96,
            tracks: [
                [
                    (0, noteOn(channel, 48)), (96, noteOn(channel, 62)), (192, noteOn(channel, 76)),
                    (288, noteOn(channel, 67)), (384, noteOn(channel, 84)), (480, noteOff(channel, 84)),
                ]
            ])
    }

    /// ... and -q ("print nothing but errors") keeps the warning to itself.
    @Test func notesOutsideTheBellsAreWarnedAboutWithTheFix() throws {
        let folder = temporaryFolder()
        try write(song(), "song.mid", in: folder)
        // (--unmapped ignore: the bundled map folds them.)
        let quiet = try bellkeys(["render", "song.mid", "-o", "quiet.wav", "-q", "--unmapped", "ignore"], in: folder)
        #expect(quiet.status == 0 && quiet.output.isEmpty && quiet.error.isEmpty, "\(quiet.error)")
        let run = try bellkeys(["render", "song.mid", "-o", "out.wav", "--unmapped", "ignore"], in: folder)
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.hasPrefix("rendered song.mid to out.wav: "))
        #expect(
            run.error == """
                bellkeys: warning: 3 of the 5 notes of song.mid have no bell in the map (its keys: C4..C5) and were left out
                    fix: add --unmapped fold to move notes outside C4..C5 by octaves onto the bells (or set "unmappedNotes": "fold" in the map)

                """)
        // Folded, every note rings: C3 → C4, E5 → E4, C6 → C5; nothing to warn about.
        let folded = try bellkeys(["render", "song.mid", "-o", "folded.wav", "--unmapped", "fold"], in: folder)
        #expect(folded.status == 0 && folded.error.isEmpty, "\(folded.error)")
        // The bundled map folds by itself.
        let bundled = try bellkeys(["render", "song.mid", "-o", "bundled.wav"], in: folder)
        #expect(bundled.status == 0 && bundled.error.isEmpty, "\(bundled.error)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: folder + "/bundled.wav"))
                == Data(contentsOf: URL(fileURLWithPath: folder + "/folded.wav")))
        #expect(folded.output.contains("5 notes, ") && folded.output.contains(" 0 unmapped notes ignored"))
        // The same as the song written with the folded notes.
        try write(
            makeMIDIFile(
                ticksPerQuarter: 96,
                tracks: [
                    [
                        (0, noteOn(0, 60)), (96, noteOn(0, 62)), (192, noteOn(0, 64)),
                        (288, noteOn(0, 67)), (384, noteOn(0, 72)), (480, noteOff(0, 72)),
                    ]
                ]), "inside.mid", in: folder)
        #expect(try bellkeys(["render", "inside.mid", "-o", "inside.wav", "-q"], in: folder).status == 0)
        #expect(try bytes(folder, "folded.wav") == bytes(folder, "inside.wav"))
    }

    /// Folding on, a note still without a bell (C#4 in a map of the C major scale) is reported
    /// as such, with a fix that is not "fold".
    @Test func notesWithoutABellEvenFoldedAreReportedAsSuch() throws {
        let folder = temporaryFolder()
        try write(
            makeMIDIFile(
                ticksPerQuarter: 96, tracks: [[(0, noteOn(0, 60)), (96, noteOn(0, 61)), (192, noteOn(0, 37))]]),
            "sharps.mid", in: folder)
        let run = try bellkeys(
            [
                "render", "sharps.mid", "-o", "out.wav", "--unmapped", "fold",
                "--map", repository + "/Samples/examples/handbells.json",
            ], in: folder)
        #expect(run.status == 0)
        #expect(
            run.error == """
                bellkeys: warning: 2 of the 3 notes of sharps.mid have no bell in the map (its keys: C4..C5), even folded by octaves, and were left out
                    fix: give the map a key for every note of the octave, or play those notes elsewhere

                """)
    }

    @Test func aSilentResultSaysSoAndExitsThree() throws {
        let folder = temporaryFolder()
        try write(
            makeMIDIFile(ticksPerQuarter: 96, tracks: [[(0, noteOn(0, 36)), (96, noteOn(0, 100))]]),
            "low.mid", in: folder)
        let run = try bellkeys(["render", "low.mid", "-o", "low.wav", "-q", "--unmapped", "ignore"], in: folder)
        #expect(run.status == 3)
        #expect(
            run.error.hasSuffix(
                "bellkeys: warning: low.wav is written but silent: no note struck a bell, because none of its 2 notes has a bell in the map (exit status 3)\n"
            ))
        #expect(FileManager.default.fileExists(atPath: folder + "/low.wav"))
        try write(makeMIDIFile(ticksPerQuarter: 96, tracks: [[(0, [0xB0, 7, 100])]]), "empty.mid", in: folder)
        let empty = try bellkeys(["render", "empty.mid", "-o", "empty.wav"], in: folder)
        #expect(empty.status == 3)
        #expect(empty.error.contains("empty.wav is written but silent: no note struck a bell, because it has no notes"))
        let demo = try bellkeys(["demo", "-o", "demo.wav", "--channel", "5", "-q"], in: folder)
        #expect(demo.status == 3)
        #expect(demo.error.contains("because --channel or --skip-drums left out all its 19 notes"))
    }

    @Test func channelAndDrumFiltersLeaveTheRestByteIdentical() throws {
        let folder = temporaryFolder()
        // Channel 1 plays C4 E4 G4; channel 2 plays D4; channel 10 (drums) plays C5 and A4.
        let mixed = makeMIDIFile(
            ticksPerQuarter: 96,
            tracks: [
                [(0, noteOn(0, 60)), (96, noteOn(0, 64)), (192, noteOn(0, 67))],
                [(48, noteOn(1, 62))],
                [(24, noteOn(9, 72)), (120, noteOn(9, 69))],
            ])
        let channelOne = makeMIDIFile(
            ticksPerQuarter: 96,
            tracks: [
                [(0, noteOn(0, 60)), (96, noteOn(0, 64)), (192, noteOn(0, 67))], [], [(120, [0xFF, 0x01, 0])],
            ])
        let noDrums = makeMIDIFile(
            ticksPerQuarter: 96,
            tracks: [
                [(0, noteOn(0, 60)), (96, noteOn(0, 64)), (192, noteOn(0, 67))], [(48, noteOn(1, 62))],
                [(120, [0xFF, 0x01, 0])],
            ])
        try write(mixed, "mixed.mid", in: folder)
        try write(channelOne, "one.mid", in: folder)
        try write(noDrums, "nodrums.mid", in: folder)
        for (arguments, name) in [
            (["mixed.mid", "-o", "a.wav"], "a.wav"),
            (["mixed.mid", "-o", "b.wav", "--channel", "1"], "b.wav"),
            (["mixed.mid", "-o", "c.wav", "--skip-drums"], "c.wav"),
            (["one.mid", "-o", "one.wav"], "one.wav"),
            (["nodrums.mid", "-o", "nodrums.wav"], "nodrums.wav"),
        ] {
            let run = try bellkeys(["render"] + arguments + ["-q"], in: folder)
            #expect(run.status == 0 && run.error.isEmpty, "\(name): \(run.error)")
        }
        #expect(try bytes(folder, "b.wav") == bytes(folder, "one.wav"))
        #expect(try bytes(folder, "c.wav") == bytes(folder, "nodrums.wav"))
        #expect(try bytes(folder, "a.wav") != bytes(folder, "c.wav"))
        // Opt-in: without either option, today's bytes (every channel, the drums too).
        let demoPlain = try bellkeys(["demo", "-o", "d1.wav", "-q"], in: folder)
        let demoFiltered = try bellkeys(["demo", "-o", "d2.wav", "-q", "--channel", "1", "--skip-drums"], in: folder)
        #expect(demoPlain.status == 0 && demoFiltered.status == 0)
        #expect(try bytes(folder, "d1.wav") == bytes(folder, "d2.wav"))
        let out = try bellkeys(["render", "mixed.mid", "-o", "x.wav", "--channel", "17"], in: folder)
        #expect(out.status == 64 && out.error.contains("--channel 17 is out of range; MIDI channels are 1 to 16"))
        let both = try bellkeys(["render", "mixed.mid", "-o", "x.wav", "--channel", "10", "--skip-drums"], in: folder)
        #expect(
            both.status == 64
                && both.error.contains(
                    "--channel 10 is the drum channel that --skip-drums leaves out; give one of them")
        )
    }

    @Test func formatTwoAndACutEndOfTrackPlay() throws {
        let folder = temporaryFolder()
        let sequences = makeMIDIFile(
            ticksPerQuarter: 96,
            tracks: [
                [(0, noteOn(0, 60)), (96, noteOff(0, 60))], [(0, noteOn(0, 67)), (96, noteOff(0, 67))],
            ], format: 2)
        let sequential = makeMIDIFile(
            ticksPerQuarter: 96,
            tracks: [
                [(0, noteOn(0, 60)), (96, noteOff(0, 60)), (96, noteOn(0, 67)), (192, noteOff(0, 67))]
            ])
        try write(sequences, "two.mid", in: folder)
        try write(sequential, "one.mid", in: folder)
        try write(Array(sequential.dropLast(3)), "cut.mid", in: folder)
        let two = try bellkeys(["render", "two.mid", "-o", "two.wav", "-q"], in: folder)
        let one = try bellkeys(["render", "one.mid", "-o", "one.wav", "-q"], in: folder)
        let cut = try bellkeys(["render", "cut.mid", "-o", "cut.wav"], in: folder)
        #expect(two.status == 0 && two.error.isEmpty, "\(two.error)")
        #expect(one.status == 0 && cut.status == 0)
        #expect(try bytes(folder, "two.wav") == bytes(folder, "one.wav"))
        #expect(try bytes(folder, "cut.wav") == bytes(folder, "one.wav"))
        #expect(
            cut.error
                == "bellkeys: warning: cut.mid: the file is cut short at byte \(sequential.count - 3), 3 bytes before the end its last track declares, inside or before that track's End-of-Track event; every note was read and is played\n"
        )
    }

    @Test func negativeNumbersAreTakenAsUsersTypeThem() throws {
        let folder = temporaryFolder()
        let spaced = try bellkeys(["demo", "-o", "spaced.wav", "--volume", "-6", "-q"], in: folder)
        let joined = try bellkeys(["demo", "-o", "joined.wav", "--volume=-6", "-q"], in: folder)
        let loud = try bellkeys(["demo", "-o", "loud.wav", "-q"], in: folder)
        #expect(spaced.status == 0 && joined.status == 0 && loud.status == 0, "\(spaced.error)")
        #expect(try bytes(folder, "spaced.wav") == bytes(folder, "joined.wav"))
        #expect(try bytes(folder, "spaced.wav") != bytes(folder, "loud.wav"))
        let tooLow = try bellkeys(["demo", "-o", "x.wav", "--volume", "-61"], in: folder)
        #expect(tooLow.status == 64 && tooLow.error.contains("--volume -61.0 is out of range; use -60 to 12 (dB)"))
        let negative = try bellkeys(["render", "x.mid", "-o", "x.wav", "--polyphony", "-3"], in: folder)
        #expect(negative.status == 64 && negative.error.contains("--polyphony -3 is out of range"))
    }
}

/// Public MIDI files kept as fixtures (Tests/Fixtures/midi: seven from jazz-soft/test-midi-files,
/// MIT, its license beside them; one SMPTE file of ours), each rendered as a user would.
@Suite struct PublicMIDIFiles {
    let fixtures = repository + "/Tests/Fixtures/midi/"

    /// Renders a fixture as a user would: with its report, or quiet (errors only).
    func render(_ name: String, _ extra: [String] = [], quiet: Bool = false, in folder: String) throws -> Run {
        try bellkeys(
            ["render", fixtures + name, "-o", folder + "/" + name + ".wav"] + (quiet ? ["-q"] : []) + extra, in: folder)
    }

    @Test(arguments: ["test-c-major-scale.mid", "test-running-status-metaevent.mid", "bellkeys-smpte-25fps-40tpf.mid"])
    func ordinaryFilesRenderWithoutAWord(name: String) throws {
        let run = try render(name, quiet: true, in: temporaryFolder())
        #expect(run.status == 0 && run.output.isEmpty && run.error.isEmpty, "\(run.error)")
        let told = try render(name, in: temporaryFolder())
        #expect(told.status == 0 && told.output.hasPrefix("rendered ") && told.error.isEmpty, "\(told.error)")
    }

    /// Format 2: the same 16 notes as the format 1 twin, but one track after the other, so
    /// longer (9.001 s against 4.900 s).
    @Test func formatTwoPlaysLongerThanItsFormatOneTwin() throws {
        let folder = temporaryFolder()
        for name in ["test-2-tracks-type-1.mid", "test-2-tracks-type-2.mid"] {
            let run = try bellkeys(
                ["render", fixtures + name, "-o", "out.wav", "--map", repository + "/Samples/examples/plain.json"],
                in: folder)
            #expect(run.status == 0)
            #expect(
                run.error.contains("1 of the 16 notes of \(fixtures + name) have no bell in the map (its keys: C4..C5)")
            )
            #expect(
                run.output.contains(name.hasSuffix("1.mid") ? ": 4.900 s, 235200 frames" : ": 9.001 s, 432064 frames"),
                "\(run.output)")
        }
    }

    /// The file lacks the last byte of its End-of-Track (the 00 of FF 2F 00): it plays, with a
    /// warning, exactly as the file with that byte put back.
    @Test func theFileMissingItsLastByteIsPlayedWithAWarning() throws {
        let folder = temporaryFolder()
        let name = "test-corrupt-file-missing-byte.mid"
        var mended = try Data(contentsOf: URL(fileURLWithPath: fixtures + name))
        #expect(mended.count == 267 && Array(mended.suffix(3)) == [0x00, 0xFF, 0x2F])
        mended.append(0)
        try mended.write(to: URL(fileURLWithPath: folder + "/mended.mid"))
        let cut = try render(name, in: folder)
        let whole = try bellkeys(["render", "mended.mid", "-o", "mended.wav", "-q"], in: folder)
        #expect(cut.status == 0 && whole.status == 0 && whole.error.isEmpty)
        #expect(
            cut.error
                == "bellkeys: warning: \(fixtures + name): the file is cut short at byte 267, 1 byte before the end its last track declares, inside or before that track's End-of-Track event; every note was read and is played\n"
        )
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name + ".wav"))
                == Data(contentsOf: URL(fileURLWithPath: folder + "/mended.wav")))
    }

    /// Drums: every note on channel 10; 144 of 183 outside the bells (left out with --unmapped
    /// ignore; the bundled map folds them). --skip-drums leaves all out.
    @Test func theDrumsRingUnlessLeftOut() throws {
        let folder = temporaryFolder()
        let name = "test-all-gm-percussion.mid"
        let rung = try render(name, ["--unmapped", "ignore"], in: folder)
        #expect(rung.status == 0 && rung.error.contains("144 of the 183 notes"))
        let skipped = try render(name, ["--skip-drums"], in: folder)
        #expect(skipped.status == 3)
        #expect(
            skipped.error.contains(
                "is written but silent: no note struck a bell, because --channel or --skip-drums left out all its 183 notes"
            ))
    }

    @Test func aFileWhoseNotesAllLieOutsideIsSilentAndSaysSo() throws {
        let folder = temporaryFolder()
        let run = try render("test-gm2-doggy-78-00-38-4c.mid", ["--unmapped", "ignore"], in: folder)
        #expect(run.status == 3)
        #expect(run.error.contains("3 of the 3 notes"))
        #expect(run.error.contains("because none of its 3 notes has a bell in the map (exit status 3)"))
        let folded = try render("test-gm2-doggy-78-00-38-4c.mid", ["--unmapped", "fold"], in: folder)
        #expect(folded.status == 0 && folded.error.isEmpty)
        let quiet = try render("test-gm2-doggy-78-00-38-4c.mid", ["--unmapped", "ignore"], quiet: true, in: folder)
        #expect(quiet.status == 3 && !quiet.error.contains("3 of the 3 notes"))
        #expect(quiet.error.contains("because none of its 3 notes has a bell in the map (exit status 3)"))
    }
}
