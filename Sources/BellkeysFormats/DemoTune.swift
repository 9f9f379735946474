/// The demo tune: the Westminster Quarters (the full hour: changes 2, 3, 4, 5) in F, within
/// C4..C5, then three strikes of the hour on C4. It is played with the sustain pedal down so
/// the bells ring; the pedal comes up at the end and the bells are damped.
///
/// `bellkeys demo` plays it, and Tools/make-bells writes it as Samples/demo.mid.
public func westminsterQuarters() -> MIDIFile {
    // (A well-formed file made here: parsing it cannot fail.)
    try! parseMIDIFile(westminsterQuartersFile(), file: "westminster-quarters")
}

/// The demo tune as Standard MIDI File bytes (format 1, 480 ticks per quarter, 100 bpm).
public func westminsterQuartersFile() -> [UInt8] {
    let ppq = 480
    let F4 = 65, G4 = 67, A4 = 69, C4 = 60
    let changes = [[F4, A4, G4, C4], [F4, G4, A4, F4], [A4, F4, G4, C4], [C4, G4, A4, F4]]
    var track: [(tick: Int, bytes: [UInt8])] = [(0, [0xB0, 7, 110]), (0, [0xB0, 64, 127])]
    var tick = 0
    var velocities = [96, 84, 90, 108]
    for change in changes {
        for (j, note) in change.enumerated() {
            let length = j == 3 ? 2 * ppq : ppq
            track.append((tick, [0x90, UInt8(note), UInt8(velocities[j])]))
            track.append((tick + length - 40, [0x80, UInt8(note), 64]))
            tick += length
        }
        tick += ppq
        velocities = velocities.map { $0 + 2 }
    }
    tick += ppq
    for _ in 0..<3 {
        track.append((tick, [0x90, UInt8(C4), 120]))
        track.append((tick + ppq, [0x80, UInt8(C4), 64]))
        tick += 4 * ppq
    }
    track.append((tick, [0xB0, 64, 0]))
    track.sort { $0.tick < $1.tick }
    return makeMIDIFile(ticksPerQuarter: ppq, microsecondsPerQuarter: 600_000, tracks: [[], track])
}
