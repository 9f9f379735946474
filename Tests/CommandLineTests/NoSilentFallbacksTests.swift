import BellkeysAudio
import BellkeysLoading
import BellkeysSystem
import Foundation
import Testing

/// What bellkeys does with what a user gives it by mistake: it says what it got and what it
/// takes, and never quietly does something else (writes a WAV file under an .mp3 name, ignores
/// a folder the user named, prints notes under -q).
@Suite struct NoSilentFallbacks {
    let demo = repository + "/Samples/demo.mid"

    @Test func aSamplesFolderWithoutAMapIsAnError() throws {
        let folder = temporaryFolder()
        let run = try bellkeys(["check"], environment: ["BELLKEYS_SAMPLES": folder])
        #expect(run.status == 1)
        #expect(run.error.contains("BELLKEYS_SAMPLES names \(folder), which has no tags.json"), "\(run.error)")
        #expect(run.error.contains("fix: set it to the folder that holds your bells' tags.json"))
        let missing = try bellkeys(["check"], environment: ["BELLKEYS_SAMPLES": folder + "/none"])
        #expect(missing.status == 1 && missing.error.contains("which is not a folder"))
        try FileManager.default.copyItem(atPath: repository + "/Samples", toPath: folder + "/bells")
        let fine = try bellkeys(["check"], environment: ["BELLKEYS_SAMPLES": folder + "/bells"])
        #expect(fine.status == 0 && fine.output.contains(folder + "/bells/tags.json"), "\(fine.output)")
    }

    /// FLAC holds the very samples the WAV file holds, at 16 and at 24 bits.
    @Test(arguments: ["s16", "s24"])
    func flacHoldsTheWAVsSamples(format: String) throws {
        let folder = temporaryFolder()
        let wav = try bellkeys(["render", demo, "-o", "demo.wav", "--format", format, "-q"], in: folder)
        let flac = try bellkeys(["render", demo, "-o", "demo.flac", "--format", format, "-q"], in: folder)
        #expect(wav.status == 0 && flac.status == 0, "\(flac.error)")
        let a = try readSoundFile(path: folder + "/demo.wav"), b = try readSoundFile(path: folder + "/demo.flac")
        #expect(a.frames.count == 1_228_352 && a.frames == b.frames && b.sampleRate == 48_000 && b.channels == 2)
        let header = try Data(contentsOf: URL(fileURLWithPath: folder + "/demo.flac")).prefix(4)
        #expect(header == Data("fLaC".utf8))
    }

    /// Ogg Vorbis and MP3, where the installed libsndfile encodes them (bookworm's 1.2.0 does
    /// both; anywhere else a missing one is refused, see below): the file is what its name says,
    /// as long as the tune, and as loud within 1 dB.
    @Test(
        .enabled(if: OutputFileKind.ogg.isBuiltIn && OutputFileKind.mp3.isBuiltIn),
        arguments: [("ogg", "OggS"), ("mp3", "ID3")])
    func lossyFilesAreWhatTheirNameSays(ext: String, magic: String) throws {
        let folder = temporaryFolder()
        let wav = try bellkeys(["render", demo, "-o", "demo.wav", "-q"], in: folder)
        let run = try bellkeys(["render", demo, "-o", "demo.\(ext)"], in: folder)
        #expect(wav.status == 0 && run.status == 0, "\(run.error)")
        let kind = ext == "ogg" ? "Ogg Vorbis" : "MP3"
        #expect(
            run.output.contains("to demo.\(ext): 25.591 s, 1228352 frames, 48000 Hz, 2 ch, \(kind)\n"), "\(run.output)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/demo.\(ext)"))
        #expect(bytes.starts(with: Data(magic.utf8)) || (ext == "mp3" && bytes.first == 0xFF))
        let a = try readSoundFile(path: folder + "/demo.wav"), b = try readSoundFile(path: folder + "/demo.\(ext)")
        #expect(abs(b.frames.count - a.frames.count) <= 4_608, "\(b.frames.count) frames")
        func rms(_ x: [Float]) -> Double {
            (x.reduce(0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
        }
        let decibels = 20 * log10(rms(b.frames) / rms(a.frames))
        #expect(abs(decibels) < 1, "\(decibels) dB")
    }

    @Test func anUnknownExtensionOrAWrongFormatIsRefusedBeforeAnyWork() throws {
        let folder = temporaryFolder()
        for name in ["out.aiff", "out", "out.mp4"] {
            let run = try bellkeys(["render", demo, "-o", name], in: folder)
            #expect(run.status == 64)
            #expect(
                run.error.contains(
                    "-o \(name): bellkeys writes WAV (.wav), FLAC (.flac), Ogg Vorbis (.ogg) and MP3 (.mp3) files"))
            #expect(!FileManager.default.fileExists(atPath: folder + "/" + name))
        }
        let ogg = try bellkeys(["render", demo, "-o", "out.ogg", "--format", "s24"], in: folder)
        #expect(
            ogg.status == 64 && ogg.error.contains("an Ogg Vorbis file is encoded from the mix as it is: drop --format")
        )
        let flac = try bellkeys(["demo", "-o", "out.flac", "--format", "f32"], in: folder)
        #expect(flac.status == 64 && flac.error.contains("a FLAC file holds s16 or s24; for f32 write a .wav file"))
        let live = try bellkeys(["demo", "--format", "s24", "--device", "null"], in: folder)
        #expect(live.status == 64 && live.error.contains("give -o FILE, or drop --format"))
        let upper = try bellkeys(["render", demo, "-o", "OUT.WAV", "-q"], in: folder)
        #expect(upper.status == 0)
        let wide = try bellkeys(["render", demo, "-o", "out.mp3", "--channels", "4"], in: folder)
        #expect(wide.status == 64 && wide.error.contains("an MP3 file holds at most 2 channels"), "\(wide.error)")
    }

    /// -q prints errors only: not an SFZ file's notes on what it does not play, not a warning
    /// about notes outside the instrument.
    @Test func quietPrintsNothingButErrors() throws {
        let folder = temporaryFolder()
        try FileManager.default.copyItem(atPath: repository + "/Samples/bell-C4.wav", toPath: folder + "/c4.wav")
        try Data("<region> sample=c4.wav key=60 xyz_unknown=3\n".utf8)
            .write(to: URL(fileURLWithPath: folder + "/sine.sfz"))
        let loud = try bellkeys(["render", demo, "-o", "a.wav", "--map", "sine.sfz"], in: folder)
        #expect(loud.status == 0 && !loud.error.isEmpty && !loud.output.isEmpty)
        let quiet = try bellkeys(["render", demo, "-o", "b.wav", "--map", "sine.sfz", "-q"], in: folder)
        #expect(quiet.status == 0 && quiet.error.isEmpty && quiet.output.isEmpty, "\(quiet.error)")
        let demoQuiet = try bellkeys(["demo", "-o", "c.wav", "--map", "sine.sfz", "-q"], in: folder)
        #expect(demoQuiet.status == 0 && demoQuiet.error.isEmpty && demoQuiet.output.isEmpty, "\(demoQuiet.error)")
    }

    @Test func mapTakesAMapAndSaysSoOfAnythingElse() throws {
        let folder = temporaryFolder()
        try FileManager.default.copyItem(atPath: demo, toPath: folder + "/song.mid")
        try FileManager.default.copyItem(atPath: repository + "/Samples/bell-C4.wav", toPath: folder + "/bell.wav")
        try Data("C4 bell.wav\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        let said = [
            "song.mid": "song.mid: this is a MIDI file (a tune), not a map; --map takes a map (JSON",
            "bell.wav": "bell.wav: this is a sound (WAV), not a map",
            "notes.txt": "notes.txt: this is not a map: a map is a JSON object, starting with {",
        ]
        for (file, text) in said {
            let run = try bellkeys(["check", "--map", file], in: folder)
            #expect(run.status == 1 && run.error.contains(text), "\(run.error)")
            #expect(!run.error.contains("not valid JSON"))
        }
        let midi = try bellkeys(["render", "notes.txt", "-o", "x.wav"], in: folder)
        #expect(midi.status == 1)
        #expect(midi.error.contains("not a Standard MIDI File: it is text (\"C4 bell.wav\")"), "\(midi.error)")
        #expect(!midi.error.contains("give a .mid file"))
    }

    /// ... from the folder whose case differs, when it is a folder.
    @Test func aMissingSampleInAFolderSuggestsThePathFromTheFolder() throws {
        let folder = temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder + "/bells", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: repository + "/Samples/bell-D4.wav", toPath: folder + "/bells/bell-D4.wav")
        try Data(#"{"keys": [{"note": "D4", "sample": "Bells/bell-D4.wav"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/map.json"))
        let run = try bellkeys(["check", "--map", "map.json"], in: folder)
        #expect(run.status == 1 && run.error.contains(#"fix: did you mean "bells/bell-D4.wav"?"#), "\(run.error)")
    }

    @Test func aMissingSampleSuggestsTheNameThatDiffersInCase() throws {
        let folder = temporaryFolder()
        try FileManager.default.copyItem(atPath: repository + "/Samples/bell-D4.wav", toPath: folder + "/bell-D4.wav")
        try Data(#"{"keys": [{"note": "D4", "sample": "Bell-D4.WAV"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/map.json"))
        let run = try bellkeys(["check", "--map", "map.json"], in: folder)
        #expect(run.status == 1)
        #expect(run.error.contains(#"keys[0].sample: "Bell-D4.WAV": no such file"#), "\(run.error)")
        #expect(run.error.contains(#"fix: did you mean "bell-D4.wav"?"#))
    }
}
