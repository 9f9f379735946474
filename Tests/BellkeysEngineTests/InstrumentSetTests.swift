import BellkeysControl
import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Glibc
import Testing

/// Four sets over four constant samples (levels 3/8, 3/32, 3/128, 3/512: exact in the bank's
/// 16 bits, and any mix of them is told apart), each playing key 60 with its own sample: "a" program 0, "b" program 5
/// of any bank, "c" program 5 of bank 1 × 128 + 2; "d" program 7 with its key damped.
private func setsEngine(startingSets: [Int: Int] = [:]) -> Engine {
    let levels: [Float] = [0.375, 0.093_75, 0.023_437_5, 0.005_859_375]
    let bank = SampleBank(samples: levels.map { constant($0, 48_000) }, sampleRate: 48_000)
    func set(_ name: String, program: Int, bank: Int? = nil, sample: Int, damp: Bool = false) -> InstrumentSet {
        let key = KeySettings(note: 60, sampleIndex: sample, noteOff: damp ? .damp(releaseSeconds: 0.001) : .ring)
        return InstrumentSet(name: name, program: program, bank: bank, instrument: Instrument(keys: [key]))
    }
    var config = EngineConfiguration(sampleRate: 48_000, polyphony: 16)
    config.limiterThreshold = 1
    let sets = InstrumentSets(
        sets: [
            set("a", program: 0, sample: 0), set("b", program: 5, sample: 1),
            set("c", program: 5, bank: 130, sample: 2), set("d", program: 7, sample: 3, damp: true),
        ], startingSets: startingSets)
    let engine = Engine(bank: bank, sets: sets, configuration: config)
    for channel in 0..<16 { engine.enqueue(.control(frame: 0, channel: channel, controller: 7, value: 127)) }
    return engine
}

@Suite struct SetChoice {
    /// A phrase loop's repeats play on the loop's own channel (16), in the set its first note was
    /// played in (not the set channel 16 started on), and a program change recorded in the phrase
    /// changes it at its frame, in every repeat: each starts with the set event
    /// (`Engine.setStatus`), which puts the channel back on the phrase's first set.
    @Test func aLoopRepeatsInTheSetItWasPlayedIn() {
        let engine = setsEngine()
        engine.enqueue(.programChange(frame: 0, program: 5)) // channel 1: "b"
        _ = render(engine, 64)
        var looper = PhraseLooper(minimumFrames: 100)
        #expect(looper.toggle(atFrame: 100, sets: (0..<16).map { engine.currentSet(channel: $0) }) == .started)
        looper.record(.noteOn(frame: 200, note: 60, velocity: 127))
        looper.recordSet(3, channel: 0, atFrame: 300) // program 7: "d"
        looper.recordSet(2, channel: 4, atFrame: 350) // another keyboard's: not the loop's
        looper.record(.noteOn(frame: 400, note: 60, velocity: 127))
        #expect(looper.toggle(atFrame: 1_100) == .closed(lengthFrames: 1_000, noteCount: 2))
        #expect(looper.phrase.first == EngineEvent(frame: 0, status: Engine.setStatus, data1: 15, data2: 1))
        #expect(looper.phrase[2] == EngineEvent(frame: 200, status: Engine.setStatus, data1: 15, data2: 3))
        #expect(looper.phrase.filter { $0.status == Engine.setStatus }.map(\.data2) == [1, 3]) // not channel 5's
        var out = [Float](repeating: 0, count: 4_200)
        var frame = 64
        while frame < out.count {
            while let event = looper.peek(through: Int64(frame) + 2_000), engine.schedule(event) { looper.advance() }
            let n = min(64, out.count - frame)
            out.withUnsafeMutableBufferPointer { engine.render(into: $0.baseAddress! + frame, frameCount: n) }
            frame += n
        }
        for k in 1...3 {
            let start = 100 + 1_000 * k
            #expect(abs(out[start + 100] - out[start + 99] - 0.093_75) < 1e-6, "repeat \(k): its first note in b")
            #expect(abs(out[start + 300] - out[start + 299] - 0.005_859_375) < 1e-6, "repeat \(k): its second in d")
        }
    }

    /// Clearing a loop cancels what is scheduled on its channel, the set event too (its channel
    /// is in its first data byte, not its status).
    @Test func cancellingALoopsChannelCancelsItsSetEvent() {
        let engine = setsEngine()
        #expect(engine.schedule(EngineEvent(frame: 1_000, status: Engine.setStatus, data1: 15, data2: 1)))
        #expect(engine.schedule(.noteOn(frame: 1_100, channel: 15, note: 60, velocity: 127)))
        engine.cancelScheduled(channel: 15)
        #expect(render(engine, 2_000).allSatisfy { $0 == 0 } && engine.currentSet(channel: 15) == 0)
    }

    /// A program change chooses the set the channel's next note plays, at that note's frame;
    /// the note already ringing rings on in its own set.
    @Test func aProgramChangeChoosesTheNextNotesSet() {
        let engine = setsEngine()
        engine.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
        engine.enqueue(.programChange(frame: 1_000, program: 5))
        engine.enqueue(.noteOn(frame: 1_000, note: 60, velocity: 127))
        let out = render(engine, 2_000)
        #expect(out[0..<100].allSatisfy { $0 == 0 })
        #expect(out[100..<1_000].allSatisfy { $0 == 0.375 })
        #expect(out[1_000..<2_000].allSatisfy { $0 == 0.375 + 0.093_75 })
        #expect(engine.missingPrograms.load(ordering: .relaxed) == 0)
    }

    /// Bank select (CC0, CC32) comes before the program change: program 5 in bank 130 is "c",
    /// in any other bank "b" (the set with no bank of its own).
    @Test func bankSelectChoosesAmongSetsOfOneProgram() {
        for (high, low, level) in [(1, 2, Float(0.023_437_5)), (0, 0, 0.093_75), (1, 3, 0.093_75)] {
            let engine = setsEngine()
            engine.enqueue(.control(frame: 0, controller: 0, value: high))
            engine.enqueue(.control(frame: 0, controller: 32, value: low))
            engine.enqueue(.programChange(frame: 10, program: 5))
            engine.enqueue(.noteOn(frame: 20, note: 60, velocity: 127))
            let out = render(engine, 100)
            #expect(out[20..<100].allSatisfy { $0 == level }, "bank \(high):\(low)")
        }
    }

    /// A program no set has is counted, remembered (bank × 128 + program) and changes nothing:
    /// the channel goes on playing its set.
    @Test func aMissingProgramIsCountedAndChangesNothing() {
        let engine = setsEngine()
        engine.enqueue(.programChange(frame: 0, program: 5))
        engine.enqueue(.control(frame: 5, controller: 0, value: 3))
        engine.enqueue(.programChange(frame: 10, program: 99))
        engine.enqueue(.noteOn(frame: 20, note: 60, velocity: 127))
        let out = render(engine, 100)
        #expect(out[20..<100].allSatisfy { $0 == 0.093_75 })
        #expect(engine.missingPrograms.load(ordering: .relaxed) == 1)
        #expect(engine.lastMissingProgram.load(ordering: .relaxed) == 3 * 128 * 128 + 99)
    }

    /// Each channel has its own set, from the map's starting sets on; a program change on one
    /// channel leaves the others.
    @Test func eachChannelPlaysItsOwnSet() {
        let engine = setsEngine(startingSets: [2: 1])
        engine.enqueue(.programChange(frame: 0, channel: 1, program: 7))
        for channel in 0..<3 { engine.enqueue(.noteOn(frame: 10, channel: channel, note: 60, velocity: 127)) }
        let out = render(engine, 100)
        #expect(out[10..<100].allSatisfy { $0 == 0.375 + 0.005_859_375 + 0.093_75 })
    }

    /// A note-off releases a key as the set that struck it plays it, at its frame: the damped
    /// key of "d" fades over its 48 frames after a program change to "a", whose key rings.
    @Test func aNoteOffAfterAProgramChangeStillDamps() {
        let engine = setsEngine()
        engine.enqueue(.programChange(frame: 0, program: 7))
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        engine.enqueue(.programChange(frame: 100, program: 0))
        engine.enqueue(.noteOff(frame: 200, note: 60))
        let out = render(engine, 2_000)
        #expect(out[0..<200].allSatisfy { $0 == 0.005_859_375 })
        for k in 0..<48 { #expect(abs(out[200 + k] - 0.005_859_375 * (1 - Float(k) / 48)) < 1e-9) }
        #expect(out[248..<2_000].allSatisfy { $0 == 0 })
    }

    /// A set's choke groups are its own: a key of group 1 in another set leaves the first
    /// set's group-1 bell ringing, where a second strike in the same set chokes it.
    @Test func chokeGroupsAreEachSetsOwn() {
        let bank = SampleBank(samples: [constant(0.375, 48_000), constant(0.093_75, 48_000)], sampleRate: 48_000)
        let sets = InstrumentSets(sets: [
            InstrumentSet(
                name: "a", program: 0,
                instrument: Instrument(keys: [KeySettings(note: 60, sampleIndex: 0, chokeGroup: 1)])),
            InstrumentSet(
                name: "b", program: 1,
                instrument: Instrument(keys: [KeySettings(note: 60, sampleIndex: 1, chokeGroup: 1)])),
        ])
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 1
        let engine = Engine(bank: bank, sets: sets, configuration: config)
        engine.enqueue(.control(frame: 0, controller: 7, value: 127))
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        engine.enqueue(.programChange(frame: 100, program: 1))
        engine.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
        engine.enqueue(.noteOn(frame: 2_000, note: 60, velocity: 127))
        let out = render(engine, 4_000)
        #expect(out[100..<2_000].allSatisfy { $0 == 0.375 + 0.093_75 })
        // The second strike of b chokes b's first (a 5 ms fade), not a's.
        #expect(out[3_000..<4_000].allSatisfy { $0 == 0.375 + 0.093_75 })
        #expect(out[2_001] < 0.375 + 2 * 0.093_75)
    }

    /// More rooms than an engine holds (--reverb hall over nine sets of nine mixes) never stops
    /// it: the sets beyond the eighth ring in the first hall.
    @Test func roomsBeyondTheLimitShareOne() {
        let bank = SampleBank(samples: [constant(0.375, 480)], sampleRate: 48_000)
        let sets = InstrumentSets(
            sets: (0..<9).map { k in
                InstrumentSet(
                    name: "\(k)", program: k,
                    instrument: Instrument(
                        keys: [KeySettings(note: 60, sampleIndex: 0)],
                        reverb: ReverbSettings(preset: .hall, mix: 0.1 * Double(k + 1))))
            })
        let engine = Engine(bank: bank, sets: sets, configuration: EngineConfiguration(sampleRate: 48_000))
        #expect(engine.roomSettings.count == Engine.maximumRooms)
        engine.enqueue(.programChange(frame: 0, program: 8))
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        #expect(power(renderStereo(engine, 48_000).left) > 0)
        #expect(engine.room(ofSet: 8) == 0)
    }

    /// A key's note-off starts the release samples of the set it was struck in, after a program
    /// change too: "a" has a release sample on key 60, "b" none.
    @Test func releaseSamplesComeFromTheStrikingSet() {
        let bank = SampleBank(samples: [constant(0.375, 480), constant(0.093_75, 4_800)], sampleRate: 48_000)
        var a = Instrument(keys: [KeySettings(note: 60, sampleIndex: 0)])
        var release = Region(sampleIndex: 1)
        release.keyRange = 60...60
        release.pitchKeycenter = 60
        release.triggersOnRelease = true
        a.regions = [release]
        let sets = InstrumentSets(sets: [
            InstrumentSet(name: "a", program: 0, instrument: a),
            InstrumentSet(name: "b", program: 1, instrument: Instrument(keys: [KeySettings(note: 61, sampleIndex: 0)])),
        ])
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 1
        let engine = Engine(bank: bank, sets: sets, configuration: config)
        engine.enqueue(.control(frame: 0, controller: 7, value: 127))
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        engine.enqueue(.programChange(frame: 100, program: 1))
        engine.enqueue(.noteOff(frame: 1_000, note: 60))
        let out = render(engine, 2_000)
        #expect(out[600..<1_000].allSatisfy { $0 == 0 })
        #expect(out[1_000..<2_000].allSatisfy { $0 == 0.093_75 })
    }

    /// A single instrument ignores program change: a file full of them plays as without.
    @Test func aSingleInstrumentIgnoresProgramChange() {
        let play = { (changes: Bool) -> [Float] in
            let engine = makeEngine(samples: [constant(0.5, 4_800)], keys: [KeySettings(note: 60, sampleIndex: 0)])
            for k in 0..<4 {
                if changes { engine.enqueue(.programChange(frame: Int64(100 * k), program: 9 + k)) }
                engine.enqueue(.noteOn(frame: Int64(100 * k + 10), note: 60, velocity: 90))
            }
            return render(engine, 1_000)
        }
        let with = play(true)
        #expect(with == play(false))
        #expect(with[10] > 0)
    }

    /// A program change arrives as MIDI bytes of two (a JACK event): one data byte, below 0x80.
    @Test func programChangeBytesMakeAnEvent() {
        let bytes: [UInt8] = [0xC3, 0x05], bad: [UInt8] = [0xC3, 0x85], long: [UInt8] = [0xC3, 0x05, 0x00]
        #expect(
            bytes.withUnsafeBufferPointer { EngineEvent(midi: $0.baseAddress!, count: 2, frame: 9) }
                == EngineEvent.programChange(frame: 9, channel: 3, program: 5).fromMIDIInput)
        #expect(bad.withUnsafeBufferPointer { EngineEvent(midi: $0.baseAddress!, count: 2, frame: 9) } == nil)
        #expect(long.withUnsafeBufferPointer { EngineEvent(midi: $0.baseAddress!, count: 3, frame: 9) } == nil)
    }
}

/// Two sets of one key each (a 0.1 s decaying tone): "dry" (program 0) and "church" (program
/// 1, in the church room at mix 0.5); `roomsToChoose` as given; starting on set `starting`.
private func roomEngine(roomsToChoose: Bool = false, starting: Int = 0) -> Engine {
    let tone: [Float] = (0..<4_800).map { i in
        let t = Double(i)
        return Float(0.5 * sin(t * 0.05) * exp(-t / 1_000))
    }
    let bank = SampleBank(samples: [tone], sampleRate: 48_000)
    let key = KeySettings(note: 60, sampleIndex: 0)
    var config = EngineConfiguration(sampleRate: 48_000, polyphony: 16)
    config.limiterThreshold = 100
    config.roomsToChoose = roomsToChoose
    let sets = InstrumentSets(
        sets: [
            InstrumentSet(name: "dry", program: 0, instrument: Instrument(keys: [key])),
            InstrumentSet(
                name: "church", program: 1,
                instrument: Instrument(keys: [key], reverb: ReverbSettings(preset: .church, mix: 0.5))),
        ], startingSet: starting)
    let engine = Engine(bank: bank, sets: sets, configuration: config)
    engine.enqueue(.control(frame: 0, controller: 7, value: 127))
    return engine
}

private func maxDifference(_ a: (left: [Float], right: [Float]), _ b: (left: [Float], right: [Float])) -> Float {
    zip(a.left + a.right, b.left + b.right).map { abs($0 - $1) }.max() ?? 0
}

/// The two strikes of the room tests, each in an engine of its own: the dry set's at frame 0,
/// the church set's at 2,400.
private func strikesAlone() -> (dry: (left: [Float], right: [Float]), church: (left: [Float], right: [Float])) {
    let dry = roomEngine()
    dry.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
    let church = roomEngine(starting: 1)
    church.enqueue(.noteOn(frame: 2_400, note: 60, velocity: 127))
    return (renderStereo(dry, 48_000), renderStereo(church, 48_000))
}

@Suite struct SetRooms {
    /// Each set rings in its own room: a dry strike, then a program change to the church set
    /// and a strike there, sound as the two alone (the dry one's tail stays dry, with no
    /// church after it), to float rounding.
    @Test func eachSetRingsInItsOwnRoom() {
        let both = roomEngine()
        both.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        both.enqueue(.programChange(frame: 2_400, program: 1))
        both.enqueue(.noteOn(frame: 2_400, note: 60, velocity: 127))
        let mixed = renderStereo(both, 48_000)
        let (a, b) = strikesAlone()
        let sum = (left: zip(a.left, b.left).map { $0 + $1 }, right: zip(a.right, b.right).map { $0 + $1 })
        #expect(maxDifference(mixed, sum) < 1e-6)
        // The dry one alone has no tail; the church one rings for seconds after its sample.
        #expect(a.left[4_800...].allSatisfy { $0 == 0 })
        #expect(power(Array(b.left[24_000..<48_000])) > 1e-6)
        #expect(both.roomSettings == [.off, ReverbSettings(preset: .church, mix: 0.5)])
    }

    /// A room chosen live takes the set's next voices from its frame; a voice already ringing
    /// rings on in the room it started in (dry here: no church after it).
    @Test func aRoomChosenLiveTakesTheNextVoices() {
        let engine = roomEngine(roomsToChoose: true)
        // Dry, the church set's room, and room, hall and church at each set's mix (the dry
        // set's: the default).
        #expect(engine.roomSettings.count == 7)
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        #expect(engine.chooseRoom(set: 0, ReverbSettings(preset: .church, mix: 0.5), frame: 2_400))
        #expect(!engine.chooseRoom(set: 0, ReverbSettings(preset: .hall, mix: 0.9), frame: 2_400)) // not held
        engine.enqueue(.noteOn(frame: 2_400, note: 60, velocity: 127))
        let live = renderStereo(engine, 48_000)
        let (a, b) = strikesAlone()
        let sum = (left: zip(a.left, b.left).map { $0 + $1 }, right: zip(a.right, b.right).map { $0 + $1 })
        #expect(maxDifference(live, sum) < 1e-6)
        #expect(engine.room(ofSet: 0) == engine.roomSettings.firstIndex(of: ReverbSettings(preset: .church, mix: 0.5)))
    }

    /// A set with no room rings in one chosen live at the mix its map gives (`reverbMix`), or,
    /// with none (an SFZ instrument or a SoundFont preset as it is), at the default.
    @Test func aDrySetTakesARoomAtItsOwnMix() {
        #expect(ReverbSettings(preset: .off, mix: 0.6).inRoom(.hall) == ReverbSettings(preset: .hall, mix: 0.6))
        #expect(
            Instrument(keys: []).reverb.inRoom(.hall) == ReverbSettings(preset: .hall, mix: ReverbSettings.defaultMix))
        // A map's reverbMix of 0 stays dry in any room.
        #expect(ReverbSettings(preset: .off, mix: 0).inRoom(.church) == ReverbSettings(preset: .church, mix: 0))
        let bank = SampleBank(samples: [constant(0.5, 480)], sampleRate: 48_000)
        var config = EngineConfiguration(sampleRate: 48_000)
        config.roomsToChoose = true
        let dry = Instrument(
            keys: [KeySettings(note: 60, sampleIndex: 0)], reverb: ReverbSettings(preset: .off, mix: 0.6))
        let engine = Engine(bank: bank, sets: InstrumentSets(dry), configuration: config)
        let events = engine.roomEvents(preset: .hall, frame: 0)
        #expect(events?.count == 1 && engine.roomSettings.contains(ReverbSettings(preset: .hall, mix: 0.6)))
        #expect(
            events.map { Int($0[0].data2) }
                == engine.roomSettings.firstIndex(of: ReverbSettings(preset: .hall, mix: 0.6)))
    }
}
