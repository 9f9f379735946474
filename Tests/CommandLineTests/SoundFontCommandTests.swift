import Foundation
import FuzzChecks
import Testing

/// A font of two presets: a 1 kHz sine at key 60 (bank 0, program 0) and the same sine an
/// octave up (bank 128, program 5, a "drum kit").
private func writeFont(_ path: String) throws {
    let sine = (0..<480).map { Int16((9_830 * sin(2 * Double.pi * 10 * Double($0) / 480)).rounded()) }
    let builder = SoundFontBuilder(
        samples: [.init(name: "sine", frames: sine, loop: 0..<480)],
        instruments: [.init(name: "sine", zones: [.init([(.sampleModes, 1)], target: 0)])],
        presets: [
            .init(name: "Sine", program: 0, zones: [.init(target: 0)]),
            .init(name: "Sine kit", bank: 128, program: 5, zones: [.init([(.coarseTune, 12)], target: 0)]),
        ])
    try Data(builder.bytes()).write(to: URL(fileURLWithPath: path))
}

/// A font of General MIDI's bells by name (bank 0): Celesta 8, Glockenspiel 9, Music Box 10,
/// Tubular Bells 14, Tinkle Bell 112; and a Glockenspiel in bank 1. Each sends 10 % into a room.
private func writeBellFont(_ path: String) throws {
    let sine = (0..<480).map { Int16((9_830 * sin(2 * Double.pi * 10 * Double($0) / 480)).rounded()) }
    let presets: [(String, Int, Int)] = [
        ("Celesta", 0, 8), ("Glockenspiel", 0, 9), ("Music Box", 0, 10), ("Tubular Bells", 0, 14),
        ("Tinkle Bell", 0, 112), ("Glockenspiel", 1, 9),
    ]
    let builder = SoundFontBuilder(
        samples: [.init(name: "sine", frames: sine, loop: 0..<480)],
        instruments: [.init(name: "sine", zones: [.init([(.sampleModes, 1), (.reverbEffectsSend, 100)], target: 0)])],
        presets: presets.map { .init(name: $0.0, bank: $0.1, program: $0.2, zones: [.init(target: 0)]) })
    try Data(builder.bytes()).write(to: URL(fileURLWithPath: path))
}

@Suite struct SoundFontCommands {
    /// --program takes a number as sent on the wire or a preset's name (any case, a beginning
    /// only one preset has); play, render and check name the preset with General MIDI's number.
    @Test func aPresetIsChosenByNameOrNumberAndNamed() throws {
        let folder = temporaryFolder()
        try writeBellFont(folder + "/bells.sf2")
        for program in ["14", "tubular bells", "Tub", "  TUBULAR   BELLS "] {
            let run = try bellkeys(["check", "--map", "bells.sf2", "--program", program], in: folder)
            #expect(run.status == 0, "--program \(program): \(run.error)")
            #expect(
                run.output.contains("room: off (dry), the zones sending 10 % into it (CC91 adds up to 20 %) · "),
                "\(run.output)")
            #expect(
                run.output.contains("instrument: bells.sf2, preset 0:14 Tubular Bells (General MIDI's program 15)"),
                "--program \(program): \(run.output)")
        }
        let ambiguous = try bellkeys(["check", "--map", "bells.sf2", "--program", "t"], in: folder)
        #expect(ambiguous.status == 1)
        #expect(ambiguous.error.contains(#""t" names 2 presets"#), "\(ambiguous.error)")
        #expect(
            ambiguous.error.contains("fix: give more of the name, or the number: 0:14 Tubular Bells, 0:112 Tinkle Bell")
        )
        let twice = try bellkeys(["check", "--map", "bells.sf2", "--program", "glock"], in: folder)
        #expect(twice.status == 1, "\(twice.error)")
        #expect(
            twice.error.contains("fix: add --bank to choose one: 0:9 Glockenspiel, 1:9 Glockenspiel"), "\(twice.error)")
        let banked = try bellkeys(["check", "--map", "bells.sf2", "--program", "glock", "--bank", "1"], in: folder)
        #expect(banked.status == 0 && banked.output.contains("preset 1:9 Glockenspiel (program 10 counted from 1)"))
        let none = try bellkeys(["check", "--map", "bells.sf2", "--program", "Dulcimer"], in: folder)
        #expect(none.status == 1 && none.error.contains(#"no preset named "Dulcimer""#), "\(none.error)")
        let outside = try bellkeys(["check", "--map", "bells.sf2", "--program", "128"], in: folder)
        #expect(outside.status == 64 && outside.error.contains("--program 128 is out of range; use 0 to 127"))
        // render names the preset it plays; so does play's start-up report (LiveSession).
        let render = try bellkeys(
            ["render", repository + "/Samples/demo.mid", "-o", "out.wav", "--map", "bells.sf2", "--program", "music"],
            in: folder)
        #expect(render.status == 0, "\(render.error)")
        #expect(render.output.hasPrefix("playing preset 0:10 Music Box (General MIDI's program 11) of bells.sf2\n"))
        let live = try bellkeys(
            ["demo", "--device", "null", "--no-ui", "--map", "bells.sf2", "--program", "celesta"], in: folder)
        #expect(
            live.status == 0 && live.output.contains("preset 0:8 Celesta (General MIDI's program 9)"), "\(live.output)")
    }

    @Test func checkListsTheWholeFontAndThenWhatOnePresetResolvesTo() throws {
        let folder = temporaryFolder()
        try writeFont(folder + "/font.sf2")
        let list = try bellkeys(["check", "--map", "font.sf2"], in: folder)
        #expect(list.status == 0)
        #expect(
            list.output.hasPrefix(
                "soundfont: font.sf2\n  2 presets (1 drum kit on channel 10), chosen by program change;"))
        #expect(list.output.contains("  0     0        Sine                  -         1 region, 1 sample (C-1..G9)\n"))
        #expect(list.output.contains("  128   5        Sine kit              -         1 region, 1 sample (C-1..G9)"))
        let one = try bellkeys(["check", "--map", "font.sf2", "--bank", "128", "--program", "5"], in: folder)
        #expect(one.status == 0)
        #expect(one.output.contains("instrument: font.sf2, preset 128:5 Sine kit (a drum kit, bank 128)"))
        #expect(one.output.contains("1 region, 1 sample (C-1..G9)"))
        let missing = try bellkeys(["check", "--map", "font.sf2", "--program", "7"], in: folder)
        #expect(missing.status == 1)
        #expect(missing.error.contains("no preset at bank 0, program 7"))
    }

    /// `render --program`: the preset plays, an octave up for the kit.
    @Test func renderPlaysThePresetChosen() throws {
        let folder = temporaryFolder()
        try writeFont(folder + "/font.sf2")
        // One note, key 60 at velocity 127, held a quarter at 120 bpm (0.5 s).
        let track: [UInt8] = [0x00, 0x90, 60, 127, 0x83, 0x60, 0x80, 60, 0, 0x00, 0xFF, 0x2F, 0x00]
        let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
        let midi = header + Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track
        try Data(midi).write(to: URL(fileURLWithPath: folder + "/one.mid"))
        for (arguments, hertz) in [([String](), 1000.0), (["--bank", "128", "--program", "5"], 2000.0)] {
            let run = try bellkeys(
                ["render", "one.mid", "-o", "out.wav", "--map", "font.sf2", "--format", "f32", "--quiet"] + arguments,
                in: folder)
            #expect(run.status == 0, "\(run.error)")
            let wav = try Data(contentsOf: URL(fileURLWithPath: folder + "/out.wav"))
            let data = try #require(wav.range(of: Data("data".utf8)))
            let floats = wav[(data.upperBound + 4)...].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let left = stride(from: 0, to: floats.count, by: 2).map { floats[$0] }
            // Rising zero crossings over 0.1 to 0.4 s give the pitch.
            let rate = 48_000.0
            let crossings = (4_800..<19_200).filter { left[$0] < 0 && left[$0 + 1] >= 0 }
            let measured = Double(crossings.count - 1) / Double(crossings.last! - crossings.first!) * rate
            #expect(abs(1200 * log2(measured / hertz)) < 5, "\(arguments): \(measured) Hz")
        }
    }

    @Test func aDamagedFontIsRefusedWithTheChunkAndTheByte() throws {
        let folder = temporaryFolder()
        try writeFont(folder + "/font.sf2")
        let whole = try Data(contentsOf: URL(fileURLWithPath: folder + "/font.sf2"))
        try whole.prefix(whole.count - 100).write(to: URL(fileURLWithPath: folder + "/cut.sf2"))
        let run = try bellkeys(["check", "--map", "cut.sf2", "--program", "0"], in: folder)
        #expect(run.status == 1)
        #expect(
            run.error.contains(
                "cut.sf2: RIFF: at byte 4: the header says the file holds \(whole.count) bytes, but it has \(whole.count - 100)"
            ))
        #expect(run.error.contains("fix: the file is cut short: copy or download it again"))
    }
}
