import BellkeysModel
import Glibc
import Testing

@testable import BellkeysEngine

/// Modulators that read live sources (controllers, pressure, the wheel): a sounding voice takes
/// their new sums at its next tick (64 frames from its first), as FluidSynth's voice takes them
/// at its next block.
@Suite struct LiveModulators {
    /// The sine engine (`sineEngine`) with `modulators` on an unfiltered region (or filtered).
    func engine(_ modulators: [Modulator], filtered: Bool = false, modulation: VoiceModulation? = nil) -> Engine {
        var region = filteredSine()
        if !filtered { region.filter = nil }
        region.modulation = modulation
        region.noteModulators = NoteModulators(modulators: modulators, cutoffRange: 20...20_000)
        return sineEngine(region)
    }

    func slot(_ e: Engine) -> Int { Int(e.pool.active[0]) }

    @Test func pressureMovesThePitchAtTheNextTick() {
        let e = engine([
            Modulator(source: .channelPressure, curve: Modulator.linear, amount: 1_200, destination: .pitchCents)
        ])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        _ = render(e, 640 + 5)
        let base = e.pool.pitchedVoices[slot(e)].baseIncrement
        #expect(e.pool.pitchedVoices[slot(e)].increment == base)
        // Pressure 64 five frames into a tick: 600 cents up, from the tick after.
        e.enqueue(.channelPressure(frame: 645, value: 64))
        _ = render(e, 10)
        #expect(e.pool.pitchedVoices[slot(e)].increment == base)
        _ = render(e, 704 - 655)
        #expect(e.pool.pitchedVoices[slot(e)].increment == base)
        _ = render(e, 1) // the tick at frame 704
        let moved = UInt64(Double(base) * exp2Fast(600.0 / 1_200) + 0.5)
        #expect(e.pool.pitchedVoices[slot(e)].increment == moved)
        // Back to none: the pitch as it began, exactly.
        e.enqueue(.channelPressure(frame: 720, value: 0))
        _ = render(e, 64)
        #expect(e.pool.pitchedVoices[slot(e)].increment == base)
    }

    /// A controller's level: over the next tick the voice moves in a line to its new level, and
    /// stays there, sample for sample against the same voice unmoved.
    @Test func aControllerMovesTheLevelOverATick() {
        let modulators = [
            Modulator(source: .controller(2), curve: Modulator.linear, amount: -12, destination: .levelDecibels)
        ]
        let e = engine(modulators), plain = engine(modulators)
        for x in [e, plain] { x.enqueue(.noteOn(frame: 0, note: 60, velocity: 100)) }
        e.enqueue(.control(frame: 1_280, controller: 2, value: 64))
        let moved = render(e, 4_000), unmoved = render(plain, 4_000)
        #expect(moved[..<1_280] == unmoved[..<1_280])
        // −12 × 64/128 = −6 dB, in a line over the tick 1,280 ... 1,343 (as the tremolo moves).
        let factor = Float(pow(10, -6.0 / 20))
        var worst: Float = 0
        for n in 1_280..<4_000 {
            let g = n < 1_344 ? 1 + (factor - 1) * Float(n - 1_280) / 64 : factor
            worst = max(worst, abs(moved[n] - unmoved[n] * g))
        }
        #expect(worst < 2e-6, "worst \(worst)")
    }

    /// The wheel read through a 14-bit curve, into the cutoff: the voice's coefficients reach the
    /// new cutoff's over the tick after the wheel moves.
    @Test func theWheelMovesTheCutoff() {
        let wheel = (0..<16_384).map { Double($0) / 16_384 }
        let e = engine(
            [Modulator(source: .pitchWheel, curve: wheel, amount: -2_400, destination: .cutoffCents)], filtered: true)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        _ = render(e, 640)
        // At note-on the wheel is at its centre: 8,192/16,384 of −2,400 cents.
        let start = lowPassCoefficients(
            cutoff: 4_000 * Glibc.exp2(-1_200.0 / 1_200), q: 0.707_106_781_186_547_5, sampleRate: 48_000)
        #expect(e.pool.pitchedVoices[slot(e)].filterCoefficients == start)
        e.enqueue(.pitchBend(frame: 640, value: 16_383))
        _ = render(e, 128)
        let end = lowPassCoefficients(
            cutoff: 4_000 * Glibc.exp2(-2_400 * 16_383.0 / 16_384 / 1_200), q: 0.707_106_781_186_547_5,
            sampleRate: 48_000)
        let got = e.pool.pitchedVoices[slot(e)].filterCoefficients
        #expect((0..<5).allSatisfy { abs(got[$0] - end[$0]) < 1e-6 }, "\(got) against \(end)")
    }

    /// A controller to the vibrato's depth (a SoundFont's CC1 modulator): none until it moves,
    /// then tick for tick the pitch of a voice whose depth was that from the start.
    @Test func aControllerDeepensTheVibrato() {
        let vibrato = VoiceModulation(vibratoLFO: ModulationLFO(frequency: 5))
        let toDepth = Modulator(
            source: .controller(1), curve: Modulator.linear, amount: 50, destination: .vibratoLFOToPitchCents)
        let e = engine([toDepth], modulation: vibrato)
        let always = engine([toDepth], modulation: vibrato)
        always.enqueue(.control(frame: 0, controller: 1, value: 127))
        for x in [e, always] { x.enqueue(.noteOn(frame: 0, note: 60, velocity: 100)) }
        e.enqueue(.control(frame: 3_200, controller: 1, value: 127))
        var before: Set<UInt64> = [], same = true
        for tick in 0..<200 {
            _ = render(e, 64)
            _ = render(always, 64)
            let a = e.pool.pitchedVoices[slot(e)].increment, b = always.pool.pitchedVoices[slot(always)].increment
            if tick < 50 { before.insert(a) } else if tick > 50, a != b { same = false }
        }
        #expect(before.count == 1)
        #expect(same)
    }

    /// A key's pressure moves that key's voices only; reset-all-controllers takes it back.
    @Test func aKeysPressureMovesThatKeyAlone() {
        let e = engine([
            Modulator(source: .keyPressure, curve: Modulator.linear, amount: 100, destination: .pitchCents)
        ])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        e.enqueue(.noteOn(frame: 0, note: 64, velocity: 100))
        _ = render(e, 64)
        func increments() -> [Int: UInt64] {
            var found: [Int: UInt64] = [:]
            for i in 0..<e.activeCount {
                let s = Int(e.pool.active[i])
                found[Int(e.pool.voices[s].note)] = e.pool.pitchedVoices[s].increment
            }
            return found
        }
        let start = increments()
        e.enqueue(.keyPressure(frame: 64, note: 64, value: 127))
        _ = render(e, 128)
        let pressed = increments()
        #expect(pressed[60] == start[60])
        #expect(pressed[64] == UInt64(Double(start[64]!) * exp2Fast(100 * 127.0 / 128 / 1_200) + 0.5))
        e.enqueue(.control(frame: 192, controller: 121, value: 0))
        _ = render(e, 128)
        #expect(increments() == start)
    }
}

/// Which moves read a voice's modulators again: not another channel's, not the pedal's
/// (FluidSynth reads CC64 only as notes start); the wheel's range (RPN 0) does, in whole
/// semitones as the data entry gives them.
@Suite struct LiveSources {
    func engine(_ modulator: Modulator) -> Engine {
        var region = filteredSine()
        region.filter = nil
        region.noteModulators = NoteModulators(modulators: [modulator], cutoffRange: 20...20_000)
        return sineEngine(region)
    }

    func increment(_ e: Engine) -> UInt64 { e.pool.pitchedVoices[Int(e.pool.active[0])].increment }

    @Test func anotherChannelAndThePedalMoveNothing() {
        let e = engine(
            Modulator(source: .controller(2), curve: Modulator.linear, amount: 600, destination: .pitchCents))
        e.enqueue(.noteOn(frame: 0, channel: 3, note: 60, velocity: 100))
        _ = render(e, 64)
        let start = increment(e)
        e.enqueue(.control(frame: 64, channel: 4, controller: 2, value: 127))
        _ = render(e, 128)
        #expect(increment(e) == start)
        e.enqueue(.control(frame: 192, channel: 3, controller: 2, value: 127))
        _ = render(e, 128)
        #expect(increment(e) == movedIncrement(start, cents: 600 * 127.0 / 128))
        let pedal = engine(
            Modulator(source: .controller(64), curve: Modulator.linear, amount: 600, destination: .pitchCents))
        pedal.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        _ = render(pedal, 64)
        let unpedalled = increment(pedal)
        pedal.enqueue(.control(frame: 64, controller: 64, value: 127))
        _ = render(pedal, 128)
        #expect(increment(pedal) == unpedalled)
    }

    @Test func theWheelsRangeIsASource() {
        let e = engine(
            Modulator(source: .pitchWheelRange, curve: Modulator.linear, amount: 1_280, destination: .pitchCents))
        var bare = filteredSine()
        bare.filter = nil
        let plain = sineEngine(bare)
        for x in [e, plain] { x.enqueue(.noteOn(frame: 0, note: 60, velocity: 100)) }
        _ = render(e, 64)
        _ = render(plain, 64)
        let base = plain.pool.pitchedVoices[Int(plain.pool.active[0])].baseIncrement
        // 2 semitones at the start: 2/128 of 1,280 cents.
        #expect(increment(e) == movedIncrement(base, cents: 20))
        for event in [
            EngineEvent.control(frame: 64, controller: 101, value: 0), .control(frame: 64, controller: 100, value: 0),
            .control(frame: 64, controller: 6, value: 36),
        ] {
            e.enqueue(event)
        }
        _ = render(e, 128)
        // 36 semitones, beyond the 24 the bend itself keeps to: 360 cents.
        #expect(increment(e) == movedIncrement(base, cents: 360))
    }

    /// A region whose modulators move its filter by velocity (played as the note starts) and
    /// its vibrato by the mod wheel idles until the wheel moves.
    @Test func aStaticModulatorLetsAVoiceIdle() {
        var region = filteredSine()
        region.modulation = VoiceModulation(vibratoLFO: ModulationLFO(frequency: 5))
        region.noteModulators = NoteModulators(
            modulators: [
                Modulator(source: .velocity, curve: Modulator.linear, amount: -1_200, destination: .cutoffCents),
                Modulator(
                    source: .controller(1), curve: Modulator.linear, amount: 50, destination: .vibratoLFOToPitchCents),
            ], cutoffRange: 20...20_000)
        let e = sineEngine(region)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        _ = render(e, 640)
        let slot = Int(e.pool.active[0])
        #expect(e.pool.modulatedVoices[slot].idle)
        e.enqueue(.control(frame: 640, controller: 1, value: 64))
        _ = render(e, 65)
        #expect(!e.pool.modulatedVoices[slot].idle && e.pool.modulatedVoices[slot].depths[4] == 25)
    }
}

/// An idle voice's LFOs are computed where it wakes (`lfoAfter`), in place of a step at every
/// tick: the same values as stepping them, for any delay and frequency.
@Suite struct IdleVoices {
    @Test func anLFOInClosedFormIsTheLFOStepped() {
        for (step, delay) in [(0.043, 0), (0.043, 48), (0.3, 640), (0.0171, 6_400), (1.7, 64)] {
            var value = 0.0, s = step
            for ticks in 1...3_000 {
                stepLFO(&value, &s, age: (ticks - 1) * 64, delay: delay)
                let closed = lfoAfter(ticks: ticks, step: step, delay: delay)
                // The next step too (at a turning point the step's sign may differ by a rounding,
                // the value it leads to not).
                var (a, aStep) = closed, (b, bStep) = (value, s)
                stepLFO(&a, &aStep, age: ticks * 64, delay: delay)
                stepLFO(&b, &bStep, age: ticks * 64, delay: delay)
                let same = abs(closed.value - value) < 1e-9 && abs(a - b) < 1e-9
                #expect(same, "step \(step) delay \(delay) ticks \(ticks)")
                if !same { return }
            }
        }
    }

    /// A SoundFont voice's default vibrato costs nothing until the mod wheel moves: idle, with
    /// no ticks stepped, and woken by CC1.
    @Test func aVoiceIdlesUntilItsVibratoHasADepth() {
        let vibrato = VoiceModulation(vibratoLFO: ModulationLFO(frequency: 5))
        var region = filteredSine()
        region.filter = nil
        region.modulation = vibrato
        region.noteModulators = NoteModulators(modulators: [
            Modulator(source: .controller(1), curve: Modulator.linear, amount: 50, destination: .vibratoLFOToPitchCents)
        ])
        let e = sineEngine(region)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        _ = render(e, 1_000)
        let slot = Int(e.pool.active[0])
        #expect(e.pool.modulatedVoices[slot].idle && e.pool.modulatedVoices[slot].ticks == 0)
        e.enqueue(.control(frame: 1_000, controller: 2, value: 127)) // not a source it reads
        _ = render(e, 10)
        #expect(e.pool.modulatedVoices[slot].idle)
        e.enqueue(.control(frame: 1_010, controller: 1, value: 1))
        _ = render(e, 1)
        // Woken at frame 1,010: 16 ticks begun (the 16th at 960), the 17th at 1,024.
        #expect(!e.pool.modulatedVoices[slot].idle && e.pool.modulatedVoices[slot].ticks == 16)
        #expect(e.pool.modulatedVoices[slot].tickLeft == 1_024 - 1_011)
    }
}
