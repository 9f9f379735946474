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
        makeMIDIFile(ticksPerQuarter: 96, tracks: [[
            (0, noteOn(channel, 48)), (96, noteOn(channel, 62)), (192, noteOn(channel, 76)),
            (288, noteOn(channel, 67)), (384, noteOn(channel, 84)), (480, noteOff(channel, 84)),
        ]])
    }

    @Test func notesOutsideTheBellsAreWarnedAboutWithTheFixEvenWhenQuiet() throws {
        let folder = temporaryFolder()
        try write(song(), "song.mid", in: folder)
        let run = try bellkeys(["render", "song.mid", "-o", "out.wav", "-q"], in: folder)
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.isEmpty)
        #expect(run.error == """
            bellkeys: warning: 3 of the 5 notes of song.mid lie outside the map's keys (C4..C5) and were left out
                fix: add --unmapped fold to move them by octaves onto the bells (or set "unmappedNotes": "fold" in the map)

            """)
        // Folded, every note rings: C3 → C4, E5 → E4, C6 → C5; nothing to warn about.
        let folded = try bellkeys(["render", "song.mid", "-o", "folded.wav", "--unmapped", "fold"], in: folder)
        #expect(folded.status == 0 && folded.error.isEmpty, "\(folded.error)")
        #expect(folded.output.contains("5 notes, ") && folded.output.contains(" 0 unmapped notes ignored"))
        // The same as the song written with the folded notes.
        try write(makeMIDIFile(ticksPerQuarter: 96, tracks: [[
            (0, noteOn(0, 60)), (96, noteOn(0, 62)), (192, noteOn(0, 64)),
            (288, noteOn(0, 67)), (384, noteOn(0, 72)), (480, noteOff(0, 72)),
        ]]), "inside.mid", in: folder)
        #expect(try bellkeys(["render", "inside.mid", "-o", "inside.wav", "-q"], in: folder).status == 0)
        #expect(try bytes(folder, "folded.wav") == bytes(folder, "inside.wav"))
    }

    @Test func aSilentResultSaysSoAndExitsThree() throws {
        let folder = temporaryFolder()
        try write(makeMIDIFile(ticksPerQuarter: 96, tracks: [[(0, noteOn(0, 36)), (96, noteOn(0, 100))]]),
                  "low.mid", in: folder)
        let run = try bellkeys(["render", "low.mid", "-o", "low.wav", "-q"], in: folder)
        #expect(run.status == 3)
        #expect(run.error.hasSuffix("bellkeys: warning: low.wav is written but silent: no bell sounds in it, because all its 2 notes lie outside the map's keys (exit status 3)\n"))
        #expect(FileManager.default.fileExists(atPath: folder + "/low.wav"))
        try write(makeMIDIFile(ticksPerQuarter: 96, tracks: [[(0, [0xB0, 7, 100])]]), "empty.mid", in: folder)
        let empty = try bellkeys(["render", "empty.mid", "-o", "empty.wav"], in: folder)
        #expect(empty.status == 3)
        #expect(empty.error.contains("empty.wav is written but silent: no bell sounds in it, because it has no notes"))
        let demo = try bellkeys(["demo", "-o", "demo.wav", "--channel", "5", "-q"], in: folder)
        #expect(demo.status == 3)
        #expect(demo.error.contains("because --channel or --skip-drums left out all its 19 notes"))
    }

    @Test func channelAndDrumFiltersLeaveTheRestByteIdentical() throws {
        let folder = temporaryFolder()
        // Channel 1 plays C4 E4 G4; channel 2 plays D4; channel 10 (drums) plays C5 and A4.
        let mixed = makeMIDIFile(ticksPerQuarter: 96, tracks: [
            [(0, noteOn(0, 60)), (96, noteOn(0, 64)), (192, noteOn(0, 67))],
            [(48, noteOn(1, 62))],
            [(24, noteOn(9, 72)), (120, noteOn(9, 69))],
        ])
        let channelOne = makeMIDIFile(ticksPerQuarter: 96, tracks: [
            [(0, noteOn(0, 60)), (96, noteOn(0, 64)), (192, noteOn(0, 67))], [], [(120, [0xFF, 0x01, 0])]])
        let noDrums = makeMIDIFile(ticksPerQuarter: 96, tracks: [
            [(0, noteOn(0, 60)), (96, noteOn(0, 64)), (192, noteOn(0, 67))], [(48, noteOn(1, 62))],
            [(120, [0xFF, 0x01, 0])]])
        try write(mixed, "mixed.mid", in: folder)
        try write(channelOne, "one.mid", in: folder)
        try write(noDrums, "nodrums.mid", in: folder)
        for (arguments, name) in [(["mixed.mid", "-o", "a.wav"], "a.wav"),
                                  (["mixed.mid", "-o", "b.wav", "--channel", "1"], "b.wav"),
                                  (["mixed.mid", "-o", "c.wav", "--skip-drums"], "c.wav"),
                                  (["one.mid", "-o", "one.wav"], "one.wav"),
                                  (["nodrums.mid", "-o", "nodrums.wav"], "nodrums.wav")] {
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
    }

    @Test func formatTwoAndACutEndOfTrackPlay() throws {
        let folder = temporaryFolder()
        let sequences = makeMIDIFile(ticksPerQuarter: 96, tracks: [
            [(0, noteOn(0, 60)), (96, noteOff(0, 60))], [(0, noteOn(0, 67)), (96, noteOff(0, 67))]], format: 2)
        let sequential = makeMIDIFile(ticksPerQuarter: 96, tracks: [
            [(0, noteOn(0, 60)), (96, noteOff(0, 60)), (96, noteOn(0, 67)), (192, noteOff(0, 67))]])
        try write(sequences, "two.mid", in: folder)
        try write(sequential, "one.mid", in: folder)
        try write(Array(sequential.dropLast(3)), "cut.mid", in: folder)
        let two = try bellkeys(["render", "two.mid", "-o", "two.wav", "-q"], in: folder)
        let one = try bellkeys(["render", "one.mid", "-o", "one.wav", "-q"], in: folder)
        let cut = try bellkeys(["render", "cut.mid", "-o", "cut.wav", "-q"], in: folder)
        #expect(two.status == 0 && two.error.isEmpty, "\(two.error)")
        #expect(one.status == 0 && cut.status == 0)
        #expect(try bytes(folder, "two.wav") == bytes(folder, "one.wav"))
        #expect(try bytes(folder, "cut.wav") == bytes(folder, "one.wav"))
        #expect(cut.error == "bellkeys: warning: cut.mid: the file is cut short at byte \(sequential.count - 3), 3 bytes before the end its last track declares, inside or before that track's End-of-Track event; every note was read and is played\n")
    }

    @Test func negativeNumbersAreTakenAsUsersTypeThem() throws {
        let folder = temporaryFolder()
        let spaced = try bellkeys(["demo", "-o", "spaced.wav", "--volume", "-6", "-q"], in: folder)
        let joined = try bellkeys(["demo", "-o", "joined.wav", "--volume=-6", "-q"], in: folder)
        let loud = try bellkeys(["demo", "-o", "loud.wav", "-q"], in: folder)
        #expect(spaced.status == 0 && joined.status == 0, "\(spaced.error)")
        #expect(try bytes(folder, "spaced.wav") == bytes(folder, "joined.wav"))
        #expect(try bytes(folder, "spaced.wav") != bytes(folder, "loud.wav"))
        let tooLow = try bellkeys(["demo", "-o", "x.wav", "--volume", "-61"], in: folder)
        #expect(tooLow.status == 64 && tooLow.error.contains("--volume -61.0 is out of range; use -60 to 12 (dB)"))
        let negative = try bellkeys(["render", "x.mid", "-o", "x.wav", "--polyphony", "-3"], in: folder)
        #expect(negative.status == 64 && negative.error.contains("--polyphony -3 is out of range"))
    }
}
