import BellkeysControl
import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Testing

/// Note n plays an impulse at n − 60 frames (ringing keys), or for the damped tests a long
/// constant bell at velocity 64 (gain (64/127)²) released over 48 frames.
@Suite struct Player {
    let g64 = VelocityCurve.square.gain(velocity: 64)

    /// A reloaded map's engine as the program builds one: nothing queued (CC7 at its default).
    func freshBells(_ values: [Float]) -> Engine {
        makeEngine(
            samples: values.map { constant($0, 30_000) },
            keys: values.indices.map { KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: release48) },
            unityVolume: false)
    }

    func longBells(_ values: [Float], damp: Bool = true) -> Engine {
        makeEngine(
            samples: values.map { constant($0, 30_000) },
            keys: values.indices.map { KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: damp ? release48 : .ring) })
    }

    @Test func aMessagePlaysOnePeriodAfterTheFrameOfItsArrival() {
        let (samples, keys) = impulseKeys()
        let rig = Rig(makeEngine(samples: samples, keys: keys))
        rig.player.play(.noteOn(channel: 0, note: 62, velocity: 127), from: 1, arrival: rig.at(200))
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 127), from: nil, arrival: rig.at(203))
        // Values out of range are read masked, as the bytes would be: channel 1, C4, velocity 127.
        rig.player.play(.noteOn(channel: 16, note: 60 + 128, velocity: 255), from: 2, arrival: rig.at(500))
        _ = rig.at(1_000)
        // 200 + 64, plus the impulse's own 2 frames; 203 + 64; 500 + 64.
        #expect(rig.sounding(0..<1_000) == [266, 267, 564])
        #expect(rig.out[266] == 1 && rig.out[267] == 1 && rig.out[564] == 1)
        #expect(rig.player.release(source: 2, arrival: rig.at(1_000)) == 1)
        #expect(rig.player.engine.lateEvents.load(ordering: .relaxed) == 0)
    }

    @Test func aSourceThatGoesAwayHasItsKeysReleasedButNotAnotherSourcesKeys() {
        let rig = Rig(longBells([1, 1]))
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 64), from: 1, arrival: rig.at(100))
        rig.player.play(.noteOn(channel: 0, note: 61, velocity: 64), from: 2, arrival: rig.at(100))
        rig.player.play(.noteOn(channel: 0, note: 61, velocity: 64), from: 1, arrival: rig.at(100))
        // Source 1 held C4 and C♯4, but source 2 holds C♯4 too: only C4 is released.
        #expect(rig.player.release(source: 1, arrival: rig.at(1_000)) == 1)
        _ = rig.at(2_000)
        // Three bells until 1,064; then C4's 48-frame release; both C♯4 bells ring on.
        #expect(abs(rig.out[1_063] - 3 * g64) < 1e-6)
        #expect(abs(rig.out[1_112] - 2 * g64) < 1e-6 && abs(rig.out[1_999] - 2 * g64) < 1e-6)
        #expect(rig.player.release(source: 2, arrival: rig.at(2_000)) == 1)
        _ = rig.at(3_000)
        #expect(rig.sounding(2_200..<3_000).isEmpty)
    }

    /// A MIDI keyboard's keys are transposed and, when it goes away, released where they
    /// sound; the computer keyboard's (`transposable` false) are not moved.
    @Test func aTransposedKeyboardThatGoesAwayHasItsTransposedKeysReleased() {
        let rig = Rig(
            makeEngine(
                samples: [constant(1, 30_000)], keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)]
            ) { $0.transpose = 12 })
        rig.player.play(.noteOn(channel: 0, note: 48, velocity: 64), from: 1, arrival: rig.at(100), transposable: true)
        rig.player.play(.noteOn(channel: 0, note: 48, velocity: 64), from: nil, arrival: rig.at(100))
        #expect(rig.player.release(source: 1, arrival: rig.at(1_000)) == 1)
        _ = rig.at(2_000)
        #expect(abs(rig.out[1_063] - g64) < 1e-6)
        #expect(rig.sounding(1_112..<2_000).isEmpty)
        #expect(rig.player.engine.ignoredNotes.load(ordering: .relaxed) == 1) // the computer keyboard's 48
    }

    @Test func aReloadedMapHearsThePlayedControllersAndTheOldBellsHearTheNoteOffs() {
        let old = longBells([0.25]), new = freshBells([0.5])
        let rig = Rig(old)
        rig.player.play(.controlChange(channel: 0, controller: 7, value: 64), from: 1, arrival: rig.at(100))
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 127), from: 1, arrival: rig.at(200))
        #expect(rig.player.install(new, masterDecibels: nil, arrival: rig.at(1_000)))
        #expect(rig.player.isReloading)
        #expect(!rig.player.install(longBells([1]), masterDecibels: nil, arrival: rig.at(1_000)))
        // The new map's C4 (note-ons go to the new engine only), at CC7 64 as played before.
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 127), from: 1, arrival: rig.at(1_100))
        _ = rig.at(1_500)
        #expect(rig.player.engine === new && rig.player.previousEngine === old)
        #expect(abs(rig.out[1_163] - 0.25 * g64) < 1e-6)
        #expect(abs(rig.out[1_164] - 0.75 * g64) < 1e-6)
        // The volume keys reach both maps' bells (ramped over the next 64 frames).
        rig.player.setMasterVolume(decibels: -6, range: -60...12)
        _ = rig.at(2_000)
        #expect(abs(rig.out[1_999] - 0.75 * g64 * linearGain(decibels: -6)) < 1e-6)
        // The key comes up: both maps' bells are damped.
        rig.player.play(.noteOff(channel: 0, note: 60, velocity: 0), from: 1, arrival: rig.at(2_000))
        _ = rig.at(3_000)
        #expect(rig.sounding(2_064 + 48..<3_000).isEmpty)
        // The old engine is silent: handed back at the next wake-up; a reload may follow.
        _ = rig.at(3_100)
        #expect(rig.player.previousEngine == nil && !rig.player.isReloading)
    }

    /// A reloaded SoundFont's channel starts CC91 at 0: CC91 127 played before the reload is
    /// heard again though a map starts there (its 100-frame bell then rings on in the hall).
    @Test func aReloadedFontHearsTheSendPlayedAtAMapsStart() {
        func font() -> Engine {
            var region = Region(sampleIndex: 0)
            region.envelope = Envelope(release: 0.001)
            var instrument = Instrument(regions: [region], reverb: ReverbSettings(preset: .hall, mix: 0.5))
            instrument.linearReverbSend = true
            let bank = SampleBank(samples: [constant(0.5, 100)], sampleRate: 48_000)
            return Engine(bank: bank, instrument: instrument, configuration: EngineConfiguration(sampleRate: 48_000))
        }
        for sent in [false, true] {
            let rig = Rig(longBells([0.25]))
            if sent {
                rig.player.play(.controlChange(channel: 0, controller: 91, value: 127), from: 1, arrival: rig.at(100))
            }
            #expect(rig.player.install(font(), masterDecibels: nil, arrival: rig.at(1_000)))
            rig.player.play(.noteOn(channel: 0, note: 60, velocity: 127), from: 1, arrival: rig.at(1_100))
            _ = rig.at(4_000)
            // The bell ends by frame 1,300; the room rings on only with the send.
            let tail = rig.out[3_000..<4_000].contains { $0 != 0 }
            #expect(tail == sent, "CC91 127 \(sent ? "played" : "not played")")
        }
    }

    /// Sets "a" (program 0), "b" (program 5, any bank), "c" (program 5, bank 1), in `order`.
    func setsEngine(_ order: [String] = ["a", "b", "c"]) -> Engine {
        let bank = SampleBank(samples: [constant(0.25, 30_000)], sampleRate: 48_000)
        let key = KeySettings(note: 60, sampleIndex: 0)
        let all = [
            "a": InstrumentSet(name: "a", program: 0, instrument: Instrument(keys: [key])),
            "b": InstrumentSet(name: "b", program: 5, instrument: Instrument(keys: [key])),
            "c": InstrumentSet(name: "c", program: 5, bank: 1, instrument: Instrument(keys: [key])),
        ]
        let sets = InstrumentSets(sets: order.map { all[$0]! })
        return Engine(bank: bank, sets: sets, configuration: EngineConfiguration(sampleRate: 48_000))
    }

    /// A loop keeps the sets of the player whose note came first: the set chosen just before
    /// recording (before the render thread has played the change), and the changes that player
    /// makes while recording, not another keyboard's. After a reload that reorders the sets,
    /// the loop finds its sets again by name.
    @Test func aLoopKeepsItsPlayersSetsAndFindsThemAgainAfterAReload() {
        let rig = Rig(setsEngine())
        rig.player.play(.programChange(channel: 0, program: 5), from: nil, arrival: rig.at(100)) // "b"
        #expect(rig.player.toggleLoop(arrival: rig.at(100)) == .started)
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 100), from: nil, arrival: rig.at(200))
        rig.player.play(.programChange(channel: 3, program: 0), from: nil, arrival: rig.at(300)) // another keyboard
        rig.player.play(.controlChange(channel: 0, controller: 32, value: 1), from: nil, arrival: rig.at(400))
        rig.player.play(.programChange(channel: 0, program: 5), from: nil, arrival: rig.at(400)) // "c"
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 100), from: nil, arrival: rig.at(500))
        #expect(rig.player.toggleLoop(arrival: rig.at(13_000)) == .closed(lengthFrames: 12_900, noteCount: 2))
        let sets = rig.player.looper.phrase.filter { $0.status == Engine.setStatus }
        #expect(sets.map(\.data1) == [15, 15] && sets.map(\.data2) == [1, 2] && sets.map(\.frame) == [0, 300])
        // The reloaded map holds c, a, b: the loop's b and c are now 2 and 0.
        let fresh = setsEngine(["c", "a", "b"])
        #expect(rig.player.install(fresh, masterDecibels: nil, arrival: rig.at(14_000)))
        #expect(rig.player.looper.phrase.filter { $0.status == Engine.setStatus }.map(\.data2) == [2, 0])
    }

    /// A reloaded map's engine puts each channel on the set it played, chosen again with the bank
    /// select the program change was read under, not one changed since without a program change.
    @Test func aReloadKeepsEachChannelsSetAsChosen() {
        let rig = Rig(setsEngine())
        rig.player.play(.controlChange(channel: 0, controller: 32, value: 1), from: nil, arrival: rig.at(100))
        rig.player.play(.programChange(channel: 0, program: 5), from: nil, arrival: rig.at(100))
        rig.player.play(.controlChange(channel: 0, controller: 32, value: 0), from: nil, arrival: rig.at(200))
        _ = rig.at(1_000)
        #expect(rig.player.engine.currentSet(channel: 0) == 2)
        let fresh = setsEngine()
        #expect(rig.player.install(fresh, masterDecibels: nil, arrival: rig.at(1_000)))
        _ = rig.at(2_000)
        #expect(fresh.currentSet(channel: 0) == 2)
        // The bank select as it stands now: program 5 again chooses "b".
        rig.player.play(.programChange(channel: 0, program: 5), from: nil, arrival: rig.at(2_000))
        _ = rig.at(3_000)
        #expect(fresh.currentSet(channel: 0) == 1)
    }

    @Test func theLoopRepeatsWhatWasPlayedAtExactlyItsLengthUntilCleared() {
        let (samples, keys) = impulseKeys()
        let rig = Rig(makeEngine(samples: samples, keys: keys))
        #expect(rig.player.toggleLoop(arrival: rig.at(1_000)) == .started)
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 127), from: nil, arrival: rig.at(1_500))
        rig.player.play(.noteOn(channel: 0, note: 62, velocity: 127), from: nil, arrival: rig.at(2_000))
        // 12,000 frames: the shortest loop kept (a quarter second).
        #expect(rig.player.toggleLoop(arrival: rig.at(13_000)) == .closed(lengthFrames: 12_000, noteCount: 2))
        _ = rig.at(40_000)
        // Live at 1,564 and 2,066; repeats every 12,000 frames from 1,064, on the loop's channel
        // (16, at the default CC7 100, where the player's channel 1 is at 127).
        #expect(rig.sounding(0..<40_000) == [1_564, 2_066, 13_564, 14_066, 25_564, 26_066, 37_564, 38_066])
        #expect(
            abs(rig.out[1_564] - 1) < 1e-6 && abs(rig.out[13_564] - VelocityCurve.square.gain(velocity: 100)) < 1e-6)
        #expect(rig.player.clearLoop(arrival: rig.at(40_000)))
        _ = rig.at(60_000)
        #expect(rig.sounding(40_000..<60_000).isEmpty)
        #expect(!rig.player.clearLoop(arrival: rig.at(60_000)))
    }

    /// ... on the engine's block grid (a multiple of 64 frames), so it is mixed in the same
    /// blocks as `render --block 64` mixes it.
    @Test func aTuneStartsAFifthOfASecondLaterAndEndsWhenItHasRungOut() {
        let (samples, keys) = impulseKeys()
        let rig = Rig(makeEngine(samples: samples, keys: keys))
        rig.player.startTune(
            [.noteOn(frame: 0, note: 60, velocity: 127), .noteOn(frame: 4_800, note: 61, velocity: 127)],
            endFrame: 9_600, arrival: rig.at(1_000))
        _ = rig.at(20_000)
        // 1,000 + 64 + 9,600 (a fifth of a second) = 10,664, up to the grid: 10,688 (167 × 64);
        // the second 4,800 frames later, plus 1.
        #expect(rig.sounding(0..<20_000) == [10_688, 15_489])
        #expect(!rig.player.tuneHasRungOut) // its end, 10,688 + 9,600, is still ahead
        _ = rig.at(20_400)
        #expect(rig.player.tuneHasRungOut)
    }

    @Test func aTuneHasRungOutOnlyWhenItsLastBellHas() {
        // A bell of 30,000 frames struck at the tune's last frame rings 30,000 frames past its end.
        let rig = Rig(makeEngine(samples: [constant(1, 30_000)], keys: [KeySettings(note: 60, sampleIndex: 0)]))
        rig.player.startTune([.noteOn(frame: 4_800, note: 60, velocity: 64)], endFrame: 4_800, arrival: rig.at(0))
        _ = rig.at(30_000) // struck at 64 + 9,600 + 4,800 = 14,464
        #expect(!rig.player.tuneHasRungOut && rig.player.voiceCount == 1)
        _ = rig.at(14_464 + 30_000 + 64)
        #expect(rig.player.tuneHasRungOut && rig.player.isSilent)
    }

    @Test func dampAllReleasesTheDampedBellsAndTheRingingOnesRingOn() {
        let engine = makeEngine(
            samples: [constant(1, 30_000), constant(1, 30_000)],
            keys: [
                KeySettings(note: 60, sampleIndex: 0, noteOff: release48),
                KeySettings(note: 61, sampleIndex: 1, noteOff: .ring),
            ])
        let rig = Rig(engine)
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 64), from: nil, arrival: rig.at(100))
        rig.player.play(.noteOn(channel: 0, note: 61, velocity: 64), from: nil, arrival: rig.at(100))
        rig.player.dampAll(arrival: rig.at(1_000))
        _ = rig.at(2_000)
        #expect(abs(rig.out[1_063] - 2 * g64) < 1e-6)
        #expect(abs(rig.out[1_112] - g64) < 1e-6 && abs(rig.out[1_999] - g64) < 1e-6)
    }

    @Test func masterVolumeIsClampedAndReachesTheEngine() {
        let rig = Rig(longBells([1]))
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 64), from: nil, arrival: rig.at(100))
        rig.player.setMasterVolume(decibels: -6, range: -60...12)
        _ = rig.at(1_000)
        #expect(rig.player.masterDecibels == -6)
        #expect(abs(rig.out[999] - g64 * linearGain(decibels: -6)) < 1e-6)
        rig.player.setMasterVolume(decibels: 30, range: -60...12)
        #expect(rig.player.masterDecibels == 12)
    }

    @Test func silenceFadesEveryBellAndDropsWhatIsScheduled() {
        let engine = makeEngine(
            samples: [constant(1, 30_000)], keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: .ring)])
        let rig = Rig(engine)
        rig.player.startTune(
            [.noteOn(frame: 0, note: 60, velocity: 64), .noteOn(frame: 9_600, note: 60, velocity: 64)],
            endFrame: 9_600, arrival: rig.at(0))
        _ = rig.at(12_000)
        #expect(rig.out[11_000] != 0 && !rig.player.isSilent)
        rig.player.silence(arrival: rig.at(12_000))
        _ = rig.at(30_000)
        // The 5 ms fade (240 frames) from 12,064; the tune's second strike (at 19,264) never comes.
        #expect(rig.sounding(12_064 + 240..<30_000).isEmpty)
        #expect(rig.player.isSilent)
    }
}
