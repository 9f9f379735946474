import BellkeysFormats
import Foundation
import Testing

/// Folding and the "left out" warning use the instrument's own range (an SFZ file's regions, a
/// set's keys), with a fix that fits it, not the bundled bells' C4..C5.
@Suite struct InstrumentRanges {
    /// Every C from C1 to C9 (notes 24 to 120, 9 notes), a quarter apart.
    func everyC(in folder: String) throws {
        let notes = stride(from: 24, through: 120, by: 12).map { UInt8($0) }
        var events: [(tick: Int, bytes: [UInt8])] = []
        for (i, note) in notes.enumerated() {
            events.append((i * 96, [0x90, note, 100]))
            events.append((i * 96 + 90, [0x80, note, 0]))
        }
        try Data(makeMIDIFile(ticksPerQuarter: 96, tracks: [events])).write(
            to: URL(fileURLWithPath: folder + "/cs.mid"))
    }

    /// An SFZ instrument over C3..C7 (one region, the bundled C4 bell at its pitch).
    func sfz(in folder: String) throws {
        try FileManager.default.copyItem(atPath: repository + "/Samples/bell-C4.wav", toPath: folder + "/c4.wav")
        try Data("<region> sample=c4.wav lokey=48 hikey=96 pitch_keycenter=60\n".utf8)
            .write(to: URL(fileURLWithPath: folder + "/bells.sfz"))
    }

    @Test func foldMovesAnSFZsNotesOntoItsRegions() throws {
        let folder = temporaryFolder()
        try everyC(in: folder)
        try sfz(in: folder)
        let plain = try bellkeys(["render", "cs.mid", "-o", "plain.wav", "--map", "bells.sfz"], in: folder)
        #expect(plain.status == 0)
        #expect(
            plain.error.contains(
                "4 of the 9 notes of cs.mid have no region in the instrument (it sounds C3..C7) and were left out\n"
                    + "    fix: add --unmapped fold to move notes outside C3..C7 by octaves onto the instrument's notes"
            ),
            "\(plain.error)")
        #expect(!plain.error.contains("C4..C5"))
        let folded = try bellkeys(
            ["render", "cs.mid", "-o", "folded.wav", "--map", "bells.sfz", "--unmapped", "fold"], in: folder)
        #expect(folded.status == 0 && folded.error.isEmpty, "\(folded.error)")
        #expect(plain.output.contains("9 notes") && folded.output.contains("0 unmapped notes ignored"))
        let a = try Data(contentsOf: URL(fileURLWithPath: folder + "/plain.wav"))
        let b = try Data(contentsOf: URL(fileURLWithPath: folder + "/folded.wav"))
        #expect(a != b)
    }

    @Test func aSetsWarningNamesTheSetsKeys() throws {
        let folder = temporaryFolder()
        try everyC(in: folder)
        let run = try bellkeys(
            [
                "render", "cs.mid", "-o", "tower.wav", "--map", repository + "/Samples/examples/bell-sets.json",
                "--set", "Tower",
            ],
            in: folder)
        #expect(run.status == 0)
        #expect(run.error.contains("have no bell in the map (its keys: C4..A4) and were left out"), "\(run.error)")
    }
}
