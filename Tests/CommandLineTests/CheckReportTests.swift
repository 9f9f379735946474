import Foundation
import Testing

/// `check` shows everything that shapes the sound, not only the samples: the room and its mix,
/// where the bells stand, velocity timbre, pitch bend; per set, and one set whole with --set;
/// and each set's own sample count.
@Suite struct CheckReport {
    @Test func theBundledMapsRoomPanAndTimbre() throws {
        let run = try bellkeys(["check"])
        #expect(run.status == 0)
        #expect(
            run.output.contains(
                "  room: hall, mix 0.3 · pan: -0.6 to +0.6 · velocity timbre 1 (softer strikes darker) · pitch bend ignored · CC10 moves the channels\n"
            ), "\(run.output)")
        #expect(run.output.contains("  key  midi tag gain     note-off        choke pan   length  sample\n"))
        #expect(run.output.contains("  C4   60   100 0.0 dB   damp 0.40 s     -     -0.6  12.60 s "))
    }

    @Test func eachSetSaysHowItSoundsAndSetShowsOneWhole() throws {
        let map = repository + "/Samples/examples/bell-sets.json"
        let all = try bellkeys(["check", "--map", map])
        #expect(all.status == 0)
        #expect(
            all.output.contains(
                "    Tower: room: church, mix 0.3 · pan: centred · velocity timbre off · pitch bend ignored"))
        #expect(all.output.contains("    Handbells: room: room, mix 0.3 · pan: -0.5 to +0.5"), "\(all.output)")
        #expect(!all.output.contains("--set: every channel starts on it"))
        let tower = try bellkeys(["check", "--map", map, "--set", "Tower"])
        #expect(tower.status == 0)
        #expect(tower.output.contains("set Tower (--set: every channel starts on it): 6 bells (C4..A4)\n"))
        #expect(tower.output.contains("  A4   69   0.0 dB   ring            6     0     9.20 s  "), "\(tower.output)")
        #expect(tower.output != all.output)
    }

    /// Every set counts the samples it plays, not those the sets before it put in the bank.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/FluidR3_GM.sf2")))
    func everySetCountsItsOwnSamples() throws {
        let run = try bellkeys(["check", "--map", repository + "/Samples/examples/gm-bells.json"])
        #expect(run.status == 0)
        #expect(!run.output.contains(" 0 samples"), "\(run.output)")
        #expect(run.output.contains("Glockenspiel    72 regions, 8 samples (C-1..G9)"))
        #expect(run.output.contains("Tubular Bells   5 regions, 1 sample (C-1..C8)"))
    }
}
