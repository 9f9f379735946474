import Foundation
import Testing

/// A 16-bit mono WAV file of `samples` (−1...1).
func wavFile(_ samples: [Float], rate: Int = 48_000) -> Data {
    var data = Data()
    func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
    func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
    data.append(contentsOf: Array("RIFF".utf8))
    u32(36 + samples.count * 2)
    data.append(contentsOf: Array("WAVEfmt ".utf8))
    u32(16)
    u16(1)
    u16(1)
    u32(rate)
    u32(rate * 2)
    u16(2)
    u16(16)
    data.append(contentsOf: Array("data".utf8))
    u32(samples.count * 2)
    for s in samples { withUnsafeBytes(of: Int16(s * 32767).littleEndian) { data.append(contentsOf: $0) } }
    return data
}

/// The bytes of a WAV file's data chunk.
func wavData(_ path: String) throws -> Data {
    let file = try Data(contentsOf: URL(fileURLWithPath: path))
    var i = 12
    while i + 8 <= file.count {
        let id = String(decoding: file[i..<i + 4], as: UTF8.self)
        let size = file[i + 4..<i + 8].withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
        if id == "data" { return file[i + 8..<min(file.count, i + 8 + size)] }
        i += 8 + size + size % 2
    }
    return Data()
}

/// A map of 13 ringing keys whose sample for note n is an impulse at index n − 60, so an
/// output frame says which note was struck where.
func impulseMap(in folder: String) throws -> String {
    var keys: [String] = []
    for i in 0..<13 {
        try wavFile((0..<16).map { $0 == i ? 1 : 0 }).write(to: URL(fileURLWithPath: folder + "/k\(i).wav"))
        keys.append("{ \"note\": \(60 + i), \"sample\": \"k\(i).wav\" }")
    }
    let map = folder + "/impulses.json"
    try "{ \"noteOff\": \"ring\", \"keys\": [\(keys.joined(separator: ", "))] }".write(
        toFile: map, atomically: true, encoding: .utf8)
    return map
}

@Suite struct Classroom {
    @Test func demoRendersTheWestminsterQuartersAtTheirFrames() throws {
        let folder = temporaryFolder()
        let map = try impulseMap(in: folder)
        let run = try bellkeys(
            ["demo", "-o", "demo.wav", "--map", map, "--format", "f32", "--channels", "1"], in: folder)
        #expect(run.status == 0, "\(run.error)")
        let data = try wavData(folder + "/demo.wav")
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let struck = samples.indices.filter { samples[$0] != 0 }
        // A crotchet is 0.6 s = 28,800 frames. Changes 2, 3, 4, 5 of the quarters in F (three
        // crotchets and a minim, then a crotchet's rest), a rest, then three strikes of C4.
        let (F, G, A, C) = (65, 67, 69, 60)
        let notes = [F, A, G, C, F, G, A, F, A, F, G, C, C, G, A, F, C, C, C]
        let beats = [0, 1, 2, 3, 6, 7, 8, 9, 12, 13, 14, 15, 18, 19, 20, 21, 25, 29, 33]
        #expect(struck == zip(beats, notes).map { $0 * 28_800 + ($1 - 60) })
        #expect(run.output.contains("19 notes"))
    }

    /// The first sound check a teacher makes: the demo played live, to its end. alsa-lib's `null`
    /// device takes the audio as fast as it comes, so the 25.6 s tune passes in a few seconds,
    /// its notes handed over as the control thread wakes (how many sound at once then depends on
    /// the machine's load: not checked here). Tests/UI/run plays it in real time with the piano
    /// drawn and compares every sample the device received with `render --block 64`, and
    /// Tests/JACK/run plays it through JACK the same way.
    @Test func demoPlaysLiveToItsEnd() throws {
        let run = try bellkeys(["demo", "--no-ui", "--device", "null"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("bellkeys: stopped (the tune has rung out)"), "\(run.output)")
        #expect(run.output.contains("dropped (queue full) 0"), "\(run.output)")
        #expect(run.output.contains(/voices: peak [1-9][0-9]*, stolen 0/), "\(run.output)")
        #expect(!run.error.contains("Can't read a value"))
    }

    @Test func demoWithoutASoundDeviceSaysHowToRenderIt() throws {
        let run = try bellkeys(["demo", "--no-ui", "--device", "hw:9"])
        #expect(run.status == 1)
        #expect(run.error.contains("hw:9: cannot open the sound device"))
        #expect(run.error.contains("`bellkeys demo -o demo.wav` renders the demo tune"))
        #expect(!run.error.contains("sequencer")) // the demo needs no MIDI input
    }

    /// The recording itself is checked against what was played in Tests/UI/run (alsa-lib's
    /// `file` device, paced like a card) and in the VM (the loopback card). Here: a take is
    /// never written over.
    @Test func aRecordingNeverReplacesAnExistingFile() throws {
        let folder = temporaryFolder()
        let old = Data("an earlier take".utf8)
        try old.write(to: URL(fileURLWithPath: folder + "/take.wav"))
        let run = try bellkeys(["demo", "--no-ui", "--device", "null", "--record", "take.wav"], in: folder)
        #expect(run.status == 1)
        #expect(run.error.contains("take.wav: cannot record: the file exists"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/take.wav")) == old)
    }

    @Test func helpDocumentsEveryCommandAndOption() throws {
        let top = try bellkeys(["--help"]).output
        for command in ["play (default)", "demo", "render", "check", "list"] { #expect(top.contains(command)) }
        let play = try bellkeys(["help", "play"]).output
        for option in [
            "--map", "--device", "--rate", "--period", "--periods", "--channels", "--priority", "--connect",
            "--channel", "--polyphony", "--volume", "--no-ui", "--record", "--quiet", "--verbose",
        ] {
            #expect(play.contains(option), "play --help lacks \(option)")
        }
        let demo = try bellkeys(["help", "demo"]).output
        for option in ["--output", "--format", "--device", "--no-ui", "--record", "--volume"] {
            #expect(demo.contains(option), "demo --help lacks \(option)")
        }
    }

    @Test func shellCompletionScripts() throws {
        for shell in ["bash", "zsh", "fish"] {
            let run = try bellkeys(["--generate-completion-script", shell])
            #expect(run.status == 0)
            #expect(run.output.contains("demo") && run.output.contains("no-ui"), "\(shell)")
        }
    }
}
