import BellkeysEngine
import BellkeysModel
import Glibc
import Testing

// Which regions a strike starts: round robin, random, keyswitches, controllers, release
// samples, chokes and the keys held.

/// SplitMix64 from the engine's seed, as a test's own oracle of the random values note-ons draw.
struct Oracle {
    var state: UInt64 = 0x6265_6C6C_6B65_7973
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) * 0x1p-53
    }
}

/// Which recording a strike plays: samples of constant levels 1/4, 1/8, 1/16 ... tell them apart.
@Suite struct RegionSelection {
    let levels: [Float] = [0.25, 0.125, 0.0625, 0.03125]
    var bank: SampleBank { SampleBank(samples: levels.map { constant($0, 40) }, sampleRate: 48_000) }

    /// The level each of `count` strikes of `note` (one every 100 frames, velocity 127) played.
    func strikes(_ e: Engine, note: Int = 60, count: Int, between: (Int) -> [EngineEvent] = { _ in [] }) -> [Float] {
        var heard: [Float] = []
        for k in 0..<count {
            for event in between(k) { e.enqueue(event) }
            e.enqueue(.noteOn(frame: Int64(100 * k), note: note, velocity: 127))
            let out = render(e, 100)
            heard.append(out[10])
        }
        return heard
    }

    /// Round robin: three recordings of a key (`seq_length=3`) take turns, strike after strike.
    @Test func roundRobinTakesTurns() {
        let regions = (0..<3).map { k in
            var r = Region(sampleIndex: k)
            r.keyRange = 60...60
            r.sequenceLength = 3
            r.sequencePosition = k + 1
            return r
        }
        let heard = strikes(regionEngine(bank, regions), count: 7)
        #expect(heard == [0.25, 0.125, 0.0625, 0.25, 0.125, 0.0625, 0.25])
    }

    /// Random: `lorand`/`hirand` split [0, 1); each note-on draws once from a generator with a
    /// fixed seed, so the same strikes choose the same recordings every time.
    @Test func randomChoiceIsRepeatable() {
        var low = Region(sampleIndex: 0), high = Region(sampleIndex: 1)
        low.randomHigh = 0.5
        high.randomLow = 0.5
        var oracle = Oracle()
        let expected = (0..<200).map { _ in oracle.next() < 0.5 ? Float(0.25) : 0.125 }
        let heard = strikes(regionEngine(bank, [low, high]), count: 200)
        #expect(heard == expected)
        #expect(heard.filter { $0 == 0.25 }.count > 80 && heard.filter { $0 == 0.25 }.count < 120)
        #expect(strikes(regionEngine(bank, [low, high]), count: 200) == heard)
    }

    /// Keyswitches: a key in the instrument's keyswitch range chooses the articulation, sounds
    /// nothing and is not counted as unplayed; the default holds until one is struck.
    @Test func aKeyswitchChoosesTheArticulation() {
        var a = Region(sampleIndex: 0), b = Region(sampleIndex: 1)
        a.keyswitch = 24
        b.keyswitch = 25
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [])
        instrument.regions = [a, b]
        instrument.keyswitchRange = 24...25
        instrument.defaultKeyswitch = 24
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        e.enqueue(.control(frame: 0, controller: 7, value: 127))
        let heard = strikes(e, count: 3) { k in
            k == 1 ? [.noteOn(frame: Int64(100 * k), note: 25, velocity: 90)] : []
        }
        #expect(heard == [0.25, 0.125, 0.125])
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 0)
    }

    /// Controller ranges: a region sounds only while its controller (here CC1) lies in range.
    @Test func controllerRangesChoose() {
        var soft = Region(sampleIndex: 0), hard = Region(sampleIndex: 1)
        soft.controllerRanges = [1: 0...63]
        hard.controllerRanges = [1: 64...127]
        let heard = strikes(regionEngine(bank, [soft, hard]), count: 3) { k in
            k == 1 ? [.control(frame: Int64(100 * k), controller: 1, value: 64)] : []
        }
        #expect(heard == [0.25, 0.125, 0.125])
    }

    /// A release sample starts at the key's note-off, at the velocity the key was struck with.
    @Test func aReleaseSampleSoundsOnNoteOff() {
        var attack = Region(sampleIndex: 0), release = Region(sampleIndex: 1)
        attack.keyRange = 60...60
        release.keyRange = 60...60
        release.triggersOnRelease = true
        let e = regionEngine(bank, [attack, release])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 64))
        e.enqueue(.noteOff(frame: 60, note: 60))
        let out = render(e, 200)
        let g = Float(64 * 64) / Float(127 * 127)
        #expect(out[0..<40].allSatisfy { $0 == 0.25 * g })
        #expect(out[40..<60].allSatisfy { $0 == 0 })
        #expect(out[60..<100].allSatisfy { $0 == 0.125 * g })
        #expect(out[100...].allSatisfy { $0 == 0 })
    }

    /// `frames` of a region of level 1/4 on key 60 (`offBy` 1, choked over `offFadeSeconds`)
    /// struck at 0, then one of level 1/8 in group 1 on key 61 struck at 100.
    func choke(offFadeSeconds: Double?, frames: Int) -> [Float] {
        let long = SampleBank(samples: [constant(0.25, 4_000), constant(0.125, 4_000)], sampleRate: 48_000)
        var open = Region(sampleIndex: 0), closed = Region(sampleIndex: 1)
        open.keyRange = 60...60
        open.offBy = 1
        open.offFadeSeconds = offFadeSeconds
        closed.keyRange = 61...61
        closed.pitchKeycenter = 61
        closed.group = 1
        let e = regionEngine(long, [open, closed])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 100, note: 61, velocity: 127))
        return render(e, frames)
    }

    /// Choke by group: a region of group 1 silences the voices of regions with `offBy` 1 (a
    /// 5 ms fade, 240 frames), not others.
    @Test func offByChokes() {
        let out = choke(offFadeSeconds: nil, frames: 1_000)
        #expect(out[99] == 0.25)
        #expect(abs(out[100] - (0.25 + 0.125)) < 1e-6)
        #expect(abs(out[220] - (0.125 + 0.125)) < 1e-3)
        #expect(out[340...].allSatisfy { $0 == 0.125 })
    }

    /// `off_mode=time`: the choked voice fades over its own `off_time` (20 ms, 960 frames), not
    /// the engine's 5 ms.
    @Test func offTimeSetsTheChokesFade() {
        let out = choke(offFadeSeconds: 0.02, frames: 2_000)
        #expect(abs(out[100 + 480] - (0.125 + 0.125)) < 1e-3)
        #expect(out[100 + 959] > 0.125)
        #expect(out[(100 + 960)...].allSatisfy { $0 == 0.125 })
    }

    /// `trigger=first` sounds only with no other key of the channel held, `trigger=legato` only
    /// with one held; a key let go no longer counts, and all-notes-off lets go of every key.
    @Test func firstAndLegatoFollowTheHeldKeys() {
        let long = SampleBank(samples: [constant(0.25, 4_000), constant(0.125, 4_000)], sampleRate: 48_000)
        var first = Region(sampleIndex: 0), legato = Region(sampleIndex: 1)
        first.keyRange = 60...62
        first.heldKeys = .first
        legato.keyRange = 60...62
        legato.heldKeys = .legato
        let e = regionEngine(long, [first, legato])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127)) // nothing held: first
        e.enqueue(.noteOn(frame: 100, note: 61, velocity: 127)) // 60 held: legato
        e.enqueue(.noteOff(frame: 200, note: 60))
        e.enqueue(.noteOn(frame: 300, note: 62, velocity: 127)) // 61 held: legato
        e.enqueue(.noteOff(frame: 400, note: 61))
        e.enqueue(.noteOff(frame: 400, note: 62))
        e.enqueue(.noteOn(frame: 500, note: 60, velocity: 127)) // nothing held: first
        e.enqueue(.control(frame: 600, controller: 123, value: 0))
        e.enqueue(.noteOn(frame: 700, note: 61, velocity: 127)) // all notes off: first
        let out = render(e, 800)
        #expect(out[50] == 0.25)
        #expect(out[150] == 0.375)
        #expect(out[350] == 0.5)
        #expect(out[550] == 0.75)
        #expect(out[750] == 1)
    }
}
