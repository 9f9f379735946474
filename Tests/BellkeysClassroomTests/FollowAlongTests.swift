import BellkeysClassroom
import BellkeysFormats
import Testing

@Suite struct FollowAlongCues {
    let ms: UInt64 = 1_000_000

    @Test func aTunesNotesAreMovedOntoTheBells() {
        let bells = Array(60...72)
        let tune = FollowTune(name: "demo", file: westminsterQuarters(), bells: bells)
        let noteOns = westminsterQuarters().events.filter { $0.status & 0xF0 == 0x90 && $0.data2 > 0 }
        #expect(tune.cues.count + tune.leftOut <= noteOns.count && !tune.cues.isEmpty && tune.leftOut == 0)
        #expect(tune.cues.allSatisfy { bells.contains($0.note) })
        #expect(zip(tune.cues, tune.cues.dropFirst()).allSatisfy { $0.milliseconds <= $1.milliseconds })
        // Three octaves down and two up land on the bells; with only C4..E4, an F# has no bell.
        let low = FollowTune(
            name: "x", file: try! parseMIDIFile(midi([(0, 36), (480, 96), (960, 66)]), file: "x.mid"),
            bells: [60, 62, 64])
        #expect(low.cues.map(\.note) == [60, 60] && low.leftOut == 1)
        #expect(low.cues.map(\.milliseconds) == [0, 500])
    }

    @Test func cuesGoAheadToTheHoldersAndStrikesAreJudged() {
        let tune = FollowTune(name: "t", cues: [(0, 60), (1_000, 62), (2_000, 60), (2_000, 64)])
        // At 50 % each second of the tune is two.
        let f = FollowAlong(tune: tune, tempo: 50, start: 10_000 * ms)
        #expect(f.cues.map(\.at) == [10_000 * ms, 12_000 * ms, 14_000 * ms, 14_000 * ms])
        // Sent 4 s ahead: at 6.0 s only the first; at 8.0 s the second too.
        let holders: (Int) -> [Int] = { note in note == 60 ? [1, 2] : [3] }
        #expect(f.cuesToSend(at: 5_999 * ms, holders: holders).isEmpty)
        #expect(f.cuesToSend(at: 6_000 * ms, holders: holders).map(\.index) == [0])
        #expect(f.cuesToSend(at: 8_000 * ms, holders: holders).map(\.expected) == [[3]])
        // Device 1: 120 ms late is on time; device 2: 151 ms early is early; again: nothing left.
        #expect(f.judge(device: 1, note: 60, at: 10_120 * ms)?.result == .onTime)
        #expect(f.judge(device: 2, note: 60, at: 9_849 * ms)?.result == .early)
        #expect(f.judge(device: 2, note: 60, at: 9_900 * ms) == nil)
        // Not cued to device 3, or not this bell.
        #expect(f.judge(device: 3, note: 60, at: 10_000 * ms) == nil)
        // 601 ms after its cue, outside the window: no judgement.
        #expect(f.judge(device: 3, note: 62, at: 12_601 * ms) == nil)
        #expect(f.closeWindows(at: 12_600 * ms).isEmpty)
        #expect(f.closeWindows(at: 12_601 * ms).map(\.device) == [3])
        #expect(f.tallies[3] == FollowAlong.Tally(missed: 1))
        #expect(f.tallies[1] == FollowAlong.Tally(onTime: 1, lastMilliseconds: 120))
        #expect(f.tallyJSON(device: 2) == "{\"onTime\":0,\"early\":1,\"late\":0,\"missed\":0,\"lastMs\":-151}")
        let rest = f.cuesToSend(at: 10_000 * ms, holders: holders)
        #expect(rest.map(\.index) == [2, 3] && !f.isOver)
        #expect(f.judge(device: 2, note: 60, at: 14_300 * ms)?.result == .late)
        #expect(f.closeWindows(at: 15_000 * ms).map(\.device) == [1, 3])
        #expect(f.isOver && f.end == 14_600 * ms)
    }

    /// A format 0 file, 480 ticks a quarter at 120 bpm (1 tick = 1.0417 ms): notes at ticks.
    func midi(_ notes: [(tick: Int, note: Int)]) -> [UInt8] {
        var track: [UInt8] = []
        var last = 0
        for (tick, note) in notes {
            track += vlq(tick - last) + [0x90, UInt8(note), 100]
            track += [0x00, 0x80, UInt8(note), 0]
            last = tick
        }
        track += [0x00, 0xFF, 0x2F, 0x00]
        let n = track.count
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
            + [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + track
    }

    func vlq(_ value: Int) -> [UInt8] {
        var bytes = [UInt8(value & 0x7F)]
        var v = value >> 7
        while v > 0 {
            bytes.insert(UInt8(v & 0x7F | 0x80), at: 0)
            v >>= 7
        }
        return bytes
    }
}
