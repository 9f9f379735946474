import BellkeysFormats
import Foundation
import Testing

/// A key's `pan` as a listener's render shows it: the position measured from the two channels.
@Suite struct PanInRenders {
    /// A map of the bundled bells C4, E4, G4 and C5 with the given pans (nil: no pan field).
    func writeMap(_ pans: [Double?], to path: String) throws {
        let names = ["C4", "E4", "G4", "C5"]
        let keys = zip(names, pans).map { name, pan in
            "{ \"note\": \"\(name)\", \"sample\": \"\(repository)/Samples/bell-\(name).wav\""
                + (pan.map { ", \"pan\": \($0)" } ?? "") + " }"
        }
        try ("{ \"keys\": [" + keys.joined(separator: ", ") + "] }").write(
            toFile: path, atomically: true, encoding: .utf8)
    }

    /// Each bell struck alone, 13 s apart (the longest bundled bell rings 12.6 s).
    func writeSong(to path: String) throws {
        let notes: [UInt8] = [60, 64, 67, 72]
        try Data(
            makeMIDIFile(
                ticksPerQuarter: 96,
                tracks: [notes.enumerated().map { (tick: $0.offset * 2_496, bytes: [0x90, $0.element, 100]) }])
        )
        .write(to: URL(fileURLWithPath: path))
    }

    func floats(_ path: String) throws -> [Float] {
        try wavData(path).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    @Test func everyBellStandsWhereTheMapSays() throws {
        let folder = temporaryFolder()
        let pans = [-0.6, -0.2, 0.3, 0.6]
        try writeMap(pans, to: folder + "/table.json")
        try writeSong(to: folder + "/song.mid")
        let run = try bellkeys(
            ["render", "song.mid", "-o", "table.wav", "--map", "table.json", "--format", "f32", "-q"], in: folder)
        #expect(run.status == 0, "\(run.error)")
        let samples = try floats(folder + "/table.wav")
        for (k, pan) in pans.enumerated() {
            // The first 2 s of bell k, alone.
            let start = k * 624_000, end = start + 96_000
            var left = 0.0, right = 0.0
            for frame in start..<end {
                left += Double(samples[2 * frame]) * Double(samples[2 * frame])
                right += Double(samples[2 * frame + 1]) * Double(samples[2 * frame + 1])
            }
            let measured = atan((right / left).squareRoot())
            let expected = (pan + 1) * Double.pi / 4
            #expect(abs(measured - expected) < 0.05, "bell \(k): θ \(measured), the map's \(expected)")
            #expect(abs(measured - expected) < 1e-5) // the law is exact; only Float rounding
        }
    }

    /// CC10 moves the channels only with a map that places its bells: a map without pan renders
    /// a file full of CC10 as before pan existed (the same bytes as without the CC10s).
    @Test func controllerTenOnlyWithAStereoTable() throws {
        let folder = temporaryFolder()
        try writeMap([nil, nil, nil, nil], to: folder + "/plain.json")
        try writeMap([-0.2, 0, 0, 0.2], to: folder + "/table.json")
        let notes: [UInt8] = [60, 64, 67, 72]
        let plain = notes.enumerated().map { (tick: $0.offset * 192, bytes: [0x90, $0.element, 100]) }
        let panning = [(tick: 0, bytes: [UInt8(0xB0), 10, 0])] + plain
        try Data(makeMIDIFile(ticksPerQuarter: 96, tracks: [plain])).write(
            to: URL(fileURLWithPath: folder + "/plain.mid"))
        try Data(makeMIDIFile(ticksPerQuarter: 96, tracks: [panning])).write(
            to: URL(fileURLWithPath: folder + "/panning.mid"))
        for (map, song, out) in [
            ("plain", "plain", "a"), ("plain", "panning", "b"), ("table", "plain", "c"), ("table", "panning", "d"),
        ] {
            let run = try bellkeys(
                ["render", song + ".mid", "-o", out + ".wav", "--map", map + ".json", "--format", "f32", "-q"],
                in: folder)
            #expect(run.status == 0, "\(run.error)")
        }
        let a = try floats(folder + "/a.wav"), b = try floats(folder + "/b.wav")
        let c = try floats(folder + "/c.wav"), d = try floats(folder + "/d.wav")
        let same = a == b, moved = c != d
        #expect(
            same,
            "first difference at \(a.indices.first { $0 < b.count && a[$0] != b[$0] } ?? -1) of \(a.count), \(b.count)")
        #expect(moved)
    }

    /// No pan and pan 0 render the same bytes; centred, both channels are exactly equal.
    @Test func noPanAndPanZeroAreTheSameBytes() throws {
        let folder = temporaryFolder()
        try writeMap([nil, nil, nil, nil], to: folder + "/plain.json")
        try writeMap([0, 0, 0, 0], to: folder + "/zero.json")
        try writeSong(to: folder + "/song.mid")
        for name in ["plain", "zero"] {
            let run = try bellkeys(
                ["render", "song.mid", "-o", name + ".wav", "--map", name + ".json", "--format", "f32", "-q"],
                in: folder)
            #expect(run.status == 0)
        }
        let plain = try floats(folder + "/plain.wav"), zero = try floats(folder + "/zero.wav")
        #expect(plain == zero)
        for frame in stride(from: 0, to: plain.count / 2, by: 7) { #expect(plain[2 * frame] == plain[2 * frame + 1]) }
    }
}

/// The room as a user meets it: `--reverb` and the map's `reverb`.
@Suite struct RoomInRenders {
    @Test func aChurchRingsLongerAndOffIsTheDryBytes() throws {
        let folder = temporaryFolder()
        // The bells alone (no reverb in the map), then with --reverb off, and in a church.
        let map = repository + "/Samples/examples/plain.json"
        let plain = try bellkeys(["demo", "-o", "plain.wav", "--map", map], in: folder)
        let off = try bellkeys(["demo", "-o", "off.wav", "--map", map, "--reverb", "off"], in: folder)
        let church = try bellkeys(["demo", "-o", "church.wav", "--map", map, "--reverb", "church"], in: folder)
        // The bundled map's hall, and the same map with --reverb off.
        let hall = try bellkeys(["demo", "-o", "hall.wav"], in: folder)
        let dryTable = try bellkeys(["demo", "-o", "table.wav", "--reverb", "off"], in: folder)
        for run in [plain, off, church, hall, dryTable] { #expect(run.status == 0, "\(run.error)") }
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: folder + "/plain.wav"))
                == Data(contentsOf: URL(fileURLWithPath: folder + "/off.wav")))
        // --reverb off on the bundled map is that map without its reverb, byte for byte.
        let bundled = try String(contentsOfFile: repository + "/Samples/tags.json", encoding: .utf8)
        let noRoom = bundled.split(separator: "\n").filter { !$0.contains("\"reverb") }.joined(separator: "\n")
            .replacingOccurrences(of: "\"sample\": \"bell-", with: "\"sample\": \"\(repository)/Samples/bell-")
        #expect(noRoom != bundled && !noRoom.contains("reverb"))
        try noRoom.write(toFile: folder + "/table.json", atomically: true, encoding: .utf8)
        let tableOnly = try bellkeys(["demo", "-o", "table-only.wav", "--map", "table.json"], in: folder)
        #expect(tableOnly.status == 0, "\(tableOnly.error)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: folder + "/table.wav"))
                == Data(contentsOf: URL(fileURLWithPath: folder + "/table-only.wav")))
        #expect(plain.output.contains(": 22.600 s, 1084800 frames"), "\(plain.output)")
        #expect(dryTable.output.contains(": 22.600 s, 1084800 frames"), "\(dryTable.output)")
        // The room's tail goes on after the last bell, to digital zero.
        #expect(hall.output.contains(": 25.591 s, 1228352 frames"), "\(hall.output)")
        #expect(church.output.contains(": 29.545 s, 1418176 frames"), "\(church.output)")
        let wrong = try bellkeys(["demo", "-o", "x.wav", "--reverb", "cave"], in: folder)
        #expect(wrong.status == 64 && wrong.error.contains("cave"))
    }

    /// An SFZ instrument has no room of its own: `--reverb hall` puts it in the hall at the
    /// default mix, the bytes of a map that names it with `"reverb": "hall"` (it used to leave
    /// it dry: the room's mix was the instrument's, 0).
    @Test func reverbPutsAnSFZInstrumentInTheRoom() throws {
        let folder = temporaryFolder()
        try FileManager.default.copyItem(atPath: repository + "/Samples/bell-C4.wav", toPath: folder + "/bell.wav")
        try "<region> sample=bell.wav lokey=0 hikey=127 pitch_keycenter=60\n".write(
            toFile: folder + "/t.sfz", atomically: true, encoding: .utf8)
        try #"{"instrument": "t.sfz", "reverb": "hall"}"#.write(
            toFile: folder + "/hall.json", atomically: true, encoding: .utf8)
        let runs = [
            try bellkeys(["demo", "-o", "dry.wav", "--map", "t.sfz"], in: folder),
            try bellkeys(["demo", "-o", "given.wav", "--map", "t.sfz", "--reverb", "hall"], in: folder),
            try bellkeys(["demo", "-o", "mapped.wav", "--map", "hall.json"], in: folder),
        ]
        for run in runs { #expect(run.status == 0, "\(run.error)") }
        let bytes = try ["dry", "given", "mapped"].map {
            try Data(contentsOf: URL(fileURLWithPath: folder + "/\($0).wav"))
        }
        #expect(bytes[1] == bytes[2] && bytes[1] != bytes[0] && bytes[1].count > bytes[0].count)
    }
}
