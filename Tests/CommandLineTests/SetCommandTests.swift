import Foundation
import Testing

/// A MIDI file (format 0, 480 ticks a quarter at 120 bpm: 1 tick = 50 frames at 48 kHz) of
/// `events`: (tick, status, data bytes).
func midiFile(_ events: [(Int, [UInt8])]) -> Data {
    var track: [UInt8] = [], last = 0
    for (tick, bytes) in events {
        var delta = tick - last, quantity: [UInt8] = [UInt8(delta & 0x7F)]
        delta >>= 7
        while delta > 0 {
            quantity.insert(UInt8(0x80 | delta & 0x7F), at: 0)
            delta >>= 7
        }
        track += quantity + bytes
        last = tick
    }
    track += [0, 0xFF, 0x2F, 0]
    let length = UInt32(track.count)
    let header: [UInt8] = [0x4D, 0x54, 0x68, 0x64, 0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
    let chunk: [UInt8] = [0x4D, 0x54, 0x72, 0x6B] + withUnsafeBytes(of: length.bigEndian, Array.init)
    return Data(header + chunk + track)
}

/// Struck notes across the bundled bells, and program changes to 0, 1 and 5 (a program the
/// bundled map of sets lacks).
private let scale: [(Int, [UInt8])] = {
    var events: [(Int, [UInt8])] = []
    for (i, note) in [60, 62, 64, 65, 67].enumerated() {
        events.append((i * 240, [0x90, UInt8(note), 100]))
        events.append((i * 240 + 200, [0x80, UInt8(note), 0]))
    }
    return events
}()

@Suite struct SetCommands {
    /// Every set of the bundled map of sets, chosen with --set, renders the bytes its own map
    /// renders alone.
    @Test func eachSetRendersAsItsMapAlone() throws {
        let folder = temporaryFolder()
        try midiFile(scale).write(to: URL(fileURLWithPath: folder + "/scale.mid"))
        let sets = repository + "/Samples/examples/bell-sets.json"
        for (name, map) in [("Handbells", "handbells"), ("tower", "tower-ring"), ("PLAIN", "plain")] {
            let a = try bellkeys(
                ["render", "scale.mid", "-o", "set.wav", "--map", sets, "--set", name, "-q"], in: folder)
            let b = try bellkeys(
                [
                    "render", "scale.mid", "-o", "alone.wav", "--map", repository + "/Samples/examples/\(map).json",
                    "-q",
                ],
                in: folder)
            #expect(a.status == 0 && b.status == 0, "\(a.error)\(b.error)")
            #expect(try wavData(folder + "/set.wav") == wavData(folder + "/alone.wav"), "\(name)")
        }
        // demo -o with --set: the tune on the tower, as on the tower's map.
        let demoSet = try bellkeys(["demo", "-o", "demo-set.wav", "--map", sets, "--set", "Tower", "-q"], in: folder)
        let demoAlone = try bellkeys(
            ["demo", "-o", "demo-alone.wav", "--map", repository + "/Samples/examples/tower-ring.json", "-q"],
            in: folder)
        #expect(demoSet.status == 0 && demoAlone.status == 0, "\(demoSet.error)\(demoAlone.error)")
        #expect(try wavData(folder + "/demo-set.wav") == wavData(folder + "/demo-alone.wav"))
        let unknown = try bellkeys(
            ["render", "scale.mid", "-o", "x.wav", "--map", sets, "--set", "Carillon"], in: folder)
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("has no set of that name") && unknown.error.contains("\"Tower\""))
        let single = try bellkeys(["render", "scale.mid", "-o", "x.wav", "--set", "Tower"], in: folder)
        #expect(single.status == 1 && single.error.contains("is a map of one instrument"))
    }

    /// Program changes in a file choose the sets; one for a program no set has is reported
    /// once, with the programs the map has, and the notes after it play on.
    @Test func programChangesInAFileChooseSets() throws {
        let folder = temporaryFolder()
        var events: [(Int, [UInt8])] = [(0, [0xC0, 1])]
        events += scale.map { ($0.0 + 10, $0.1) }
        events += [(2_000, [0xC0, 5])] + scale.map { ($0.0 + 2_010, $0.1) }
        try midiFile(events).write(to: URL(fileURLWithPath: folder + "/changes.mid"))
        let run = try bellkeys(
            ["render", "changes.mid", "-o", "out.wav", "--map", repository + "/Samples/examples/bell-sets.json"],
            in: folder)
        #expect(run.status == 0, "\(run.error)")
        #expect(
            run.error.contains(
                "1 program change chose no set (the last: program 5 on channel 1); each channel kept the set it had. The map's sets: 0 Handbells, 1 Tower, 2 Plain"
            ), "\(run.error)")
        #expect(run.output.contains("10 notes"))
    }

    /// check lists the sets: program, bank, channels, room, name and what each plays.
    @Test func checkListsTheSets() throws {
        let run = try bellkeys(["check", "--map", repository + "/Samples/examples/bell-sets.json"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("3 sets, 13 samples, 48000 Hz"))
        #expect(run.output.contains("  0        any   all       room    Handbells       8 bells (C4..C5)"))
        #expect(run.output.contains("  1        any   -         church  Tower           6 bells (C4..A4)"))
    }
}
