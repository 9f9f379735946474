import AllocationCounter
import BellkeysControl
import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Testing

/// A whole font's presets as sets (`InstrumentSets(soundFontPresets:)`), each playing key 60
/// with a constant sample of its own level: 0:0, 0:5, 8:5, 128:0 and 128:16, then `extra`
/// presets in bank 1 (programs 0, 1, ...) at level 1/1024.
private let fontLevels: [Float] = [0.375, 0.093_75, 0.023_437_5, 0.005_859_375, 0.001_464_843_75]
private func fontEngine(drums: Bool = true, extra: Int = 0) -> Engine {
    let bank = SampleBank(samples: (fontLevels + [1.0 / 1_024]).map { constant($0, 48_000) }, sampleRate: 48_000)
    func preset(_ bank: Int, _ program: Int, sample: Int) -> InstrumentSet {
        let key = KeySettings(note: 60, sampleIndex: sample, noteOff: .ring)
        return InstrumentSet(
            name: "\(bank):\(program)", program: program, bank: bank, instrument: Instrument(keys: [key]),
            preset: "\(bank):\(program)")
    }
    var presets = [preset(0, 0, sample: 0), preset(0, 5, sample: 1), preset(8, 5, sample: 2)]
    if drums { presets += [preset(128, 0, sample: 3), preset(128, 16, sample: 4)] }
    presets += (0..<extra).map { preset(1 + $0 / 128, $0 % 128, sample: 5) }
    var config = EngineConfiguration(sampleRate: 48_000, polyphony: 64)
    config.limiterThreshold = 1
    let engine = Engine(bank: bank, sets: InstrumentSets(soundFontPresets: presets), configuration: config)
    for channel in 0..<16 { engine.enqueue(.control(frame: 0, channel: channel, controller: 7, value: 127)) }
    return engine
}

/// The level key 60 plays on `channel` after `events` (at frame 0, in order), and the engine.
private func levelAfter(_ events: [EngineEvent], channel: Int = 0, drums: Bool = true) -> (Float, Engine) {
    let engine = fontEngine(drums: drums)
    for event in events { engine.enqueue(event) }
    engine.enqueue(.noteOn(frame: 10, channel: channel, note: 60, velocity: 127))
    let out = render(engine, 64)
    return (out[63], engine)
}

@Suite struct WholeFontChoice {
    /// Every channel starts on bank 0 program 0, channel 10 on the drum kit 128:0; a font with no
    /// kit starts channel 10 as the others.
    @Test func channelsStartOnThePianoAndChannelTenOnTheKit() {
        #expect(levelAfter([], channel: 0).0 == fontLevels[0])
        #expect(levelAfter([], channel: 9).0 == fontLevels[3])
        #expect(levelAfter([], channel: 9, drums: false).0 == fontLevels[0])
    }

    /// CC0 selects the bank and CC32 is ignored (FluidSynth's "gs" bank select): CC0 8 with
    /// program 5 plays 8:5; CC0 0 with CC32 8, program 5, plays 0:5.
    @Test func theBankIsCC0Alone() {
        let (bank8, first) = levelAfter([
            .control(frame: 0, controller: 0, value: 8), .programChange(frame: 0, program: 5),
        ])
        #expect(bank8 == fontLevels[2] && first.missingPrograms.load(ordering: .relaxed) == 0)
        let (low, second) = levelAfter([
            .control(frame: 0, controller: 32, value: 8), .programChange(frame: 0, program: 5),
        ])
        #expect(low == fontLevels[1] && second.missingPrograms.load(ordering: .relaxed) == 0)
    }

    /// Channel 10 plays bank 128 whatever CC0 says; a kit the font lacks plays 128:0 in its
    /// place, counted with its channel (9 × 2^21 + 128 × 128 + 25).
    @Test func channelTenPlaysKitsAndAMissingKitPlaysTheStandardOne() {
        let (kit, _) = levelAfter(
            [
                .control(frame: 0, channel: 9, controller: 0, value: 8),
                .programChange(frame: 0, channel: 9, program: 16),
            ],
            channel: 9)
        #expect(kit == fontLevels[4])
        let (missing, engine) = levelAfter(
            [.programChange(frame: 0, channel: 9, program: 16), .programChange(frame: 0, channel: 9, program: 25)],
            channel: 9)
        #expect(missing == fontLevels[3])
        #expect(engine.missingPrograms.load(ordering: .relaxed) == 1)
        #expect(engine.lastMissingProgram.load(ordering: .relaxed) == 9 << 21 | 128 << 7 | 25)
    }

    /// A melodic program the font lacks plays bank 0 of the same program, else bank 0 program 0
    /// (FluidSynth 2.3.1's substitutes), each counted; a melodic channel never reaches bank 128.
    @Test func aMissingProgramPlaysFluidSynthsSubstitute() {
        let cases: [(bank: Int, program: Int, level: Float)] = [
            (3, 5, fontLevels[1]), (8, 9, fontLevels[0]), (0, 16, fontLevels[0]), (127, 0, fontLevels[0]),
        ]
        for (bank, program, level) in cases {
            let (played, engine) = levelAfter(
                [
                    .control(frame: 0, channel: 2, controller: 0, value: bank),
                    .programChange(frame: 0, channel: 2, program: program),
                ], channel: 2)
            #expect(played == level, "\(bank):\(program)")
            #expect(engine.missingPrograms.load(ordering: .relaxed) == 1)
            #expect(engine.lastMissingProgram.load(ordering: .relaxed) == 2 << 21 | bank << 7 | program)
        }
    }

    /// The control thread's view (`Engine.set(channel:program:bankHigh:bankLow:)`, which a loop
    /// records) follows the same rule.
    @Test func theControlThreadSeesTheSameChoice() {
        let engine = fontEngine()
        #expect(engine.set(channel: 0, program: 5, bankHigh: 8, bankLow: 0) == 2)
        #expect(engine.set(channel: 0, program: 5, bankHigh: 0, bankLow: 8) == 1)
        #expect(engine.set(channel: 9, program: 16, bankHigh: 8, bankLow: 0) == 4)
        #expect(engine.set(channel: 9, program: 99, bankHigh: 0, bankLow: 0) == 3)
        #expect(engine.set(channel: 4, program: 99, bankHigh: 0, bankLow: 0) == 0)
    }

    /// 311 presets (as in MuseScore's General MIDI font): a set past 255 is chosen, published
    /// (16 bits a channel) and carried by a set event (a phrase loop's); a note-off releases
    /// the key in the set that struck it.
    @Test func morePresetsThanAByteHolds() {
        let engine = fontEngine(extra: 306)
        // Preset 300 of bank 1 and up: bank 3, program 300 - 256 = 44.
        engine.enqueue(.control(frame: 0, channel: 5, controller: 0, value: 3))
        engine.enqueue(.programChange(frame: 0, channel: 5, program: 44))
        _ = render(engine, 64)
        let chosen = engine.currentSet(channel: 5)
        #expect(chosen == 5 + 300)
        let event = Engine.setEvent(frame: 64, channel: 11, set: chosen)
        #expect(event.channel == 11 && event.chosenSet == chosen)
        engine.enqueue(event)
        _ = render(engine, 64)
        #expect(engine.currentSet(channel: 11) == chosen && engine.currentSet(channel: 10) == 0)
    }

    /// A room event names any of 311 sets (12 bits: the live `r` key changes the room in
    /// place, not by a new engine).
    @Test func aRoomEventNamesAnyOfManySets() {
        let engine = fontEngine(extra: 306)
        let events = engine.roomEvents(preset: .off, frame: 0)
        #expect(events?.count == 311)
        let last = events?.last
        #expect(last?.data1 == UInt8(310 & 255) && last?.data2 == UInt8(310 >> 8) << 4)
    }

    /// Program changes across 311 presets on every channel, notes on and off between them: the
    /// render thread allocates nothing.
    @Test func choosingAmongManyPresetsNeverAllocates() {
        let engine = fontEngine(extra: 306)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer { output.deallocate() }
        _ = render(engine, 64)
        bellkeys_allocations_start()
        var frame: Int64 = 64
        for b in 0..<2_000 {
            let channel = b % 16
            engine.enqueue(.control(frame: frame, channel: channel, controller: 0, value: b % 5))
            engine.enqueue(.programChange(frame: frame + 1, channel: channel, program: (b * 37) % 128))
            engine.enqueue(.noteOn(frame: frame + 2, channel: channel, note: 60, velocity: 100))
            engine.enqueue(.noteOff(frame: frame + 40, channel: (b + 8) % 16, note: 60))
            engine.render(into: output, frameCount: 64)
            frame += 64
        }
        let allocations = bellkeys_allocations_stop()
        #expect(allocations == 0)
        #expect(engine.missingPrograms.load(ordering: .relaxed) > 0)
    }
}
