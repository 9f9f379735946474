import AllocationCounter
import BellkeysEngine
import BellkeysModel
import Synchronization
import Testing

@Suite struct RealTimeSafety {
    /// Thousands of blocks with voices starting, stealing, damping, choking, sustaining and
    /// volume moving, a third of the keys panned, rendered mono and stereo in turn: the render
    /// thread must not allocate once; with the dry bells, and in a church (the reverb running)
    /// with velocity timbre (every voice under 127 through its low-pass).
    @Test(arguments: [ReverbPreset.off, .church])
    func renderingNeverAllocates(room: ReverbPreset) {
        var samples: [[Float]] = []
        for k in 0..<13 {
            let sawtooth: [Float] = (0..<9_600).map { i in Float((i * (k + 3)) % 200 - 100) / 200 }
            samples.append(sawtooth)
        }
        let keys = (0..<13).map {
            KeySettings(
                note: 60 + $0, sampleIndex: $0, gain: 0.7,
                noteOff: $0 % 2 == 0 ? .ring : .damp(releaseSeconds: 0.05),
                chokeGroup: $0 == 12 ? 1 : 0,
                leftGain: $0 % 3 == 1 ? 0.8 : 1, rightGain: $0 % 3 == 1 ? 0.3 : 1)
        }
        let e = makeEngine(
            samples: samples, keys: keys, polyphony: 24, reverb: ReverbSettings(preset: room, mix: 0.4),
            velocityTimbre: room == .off ? 0 : 1
        ) { $0.transpose = 12 }
        let block = 64
        let output = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer {
            output.deallocate()
            right.deallocate()
        }
        var frame: Int64 = 0
        bellkeys_allocations_start()
        for b in 0..<5_000 {
            let note = 60 + (b * 7) % 13
            // Every other note a MIDI input's, an octave lower, moved up by the transposition.
            var on = EngineEvent.noteOn(frame: frame + Int64(b % block), note: note, velocity: 1 + b % 127)
            var off = EngineEvent.noteOff(frame: frame + 5, note: note)
            if b % 2 == 1 {
                (on.transposable, on.data1, off.transposable, off.data1) = (
                    true, UInt8(note - 12), true, UInt8(note - 12)
                )
            }
            e.enqueue(on)
            if b % 3 == 0 { e.enqueue(off) }
            if b % 50 == 0 { e.enqueue(.control(frame: frame, controller: 7, value: b % 128)) }
            if b % 70 == 0 { e.enqueue(.control(frame: frame, controller: 64, value: (b / 70) % 2 * 127)) }
            if b % 60 == 0 { e.enqueue(.control(frame: frame + 3, controller: 10, value: (b * 37) % 128)) }
            if b % 80 == 0 { e.enqueue(.control(frame: frame + 9, controller: 91, value: (b * 53) % 128)) }
            if b % 500 == 0 { e.enqueue(.control(frame: frame, controller: 123, value: 0)) }
            if b % 900 == 0 { e.enqueue(.control(frame: frame, controller: 120, value: 0)) }
            if b % 40 == 0 { e.setMasterVolume(decibels: -Double(b % 12)) }
            if b % 2 == 0 {
                e.render(into: output, frameCount: block)
            } else {
                e.render(left: output, right: right, frameCount: block)
            }
            frame += Int64(block)
        }
        let allocations = bellkeys_allocations_stop()
        #expect(allocations == 0)
        #expect(e.stolenVoices.load(ordering: .relaxed) > 0)
        #expect(e.peakVoiceCount.load(ordering: .relaxed) > 24)
    }

    /// An instrument of regions as SFZ files make them, in every way a voice can play: transposed
    /// up and down (stretched kernels too), stereo and mono, looped (continuous and sustain) and
    /// one-shot, under envelopes, in velocity layers with crossfade gains, round robin, random
    /// choice, keyswitches, controller ranges, release samples and choke groups, a third under a
    /// modulation envelope and LFOs on their pitch and filter (half of those by sfizz's rules,
    /// as an SFZ file's `pitcheg`, `fileg` and LFOs), a third with modulators that
    /// follow the controllers, pressure and the wheel as they move, half with sends of their own
    /// into the hall (a SoundFont's, CC91 on its line moving); thousands of blocks at every
    /// quality: the render thread must not allocate once.
    @Test(arguments: InterpolationQuality.allCases)
    func pitchedRegionsNeverAllocate(quality: InterpolationQuality) {
        let bank = SampleBank(sampleRate: 48_000)
        for k in 0..<6 {
            let saw: [Float] = (0..<9_600).map { i in Float((i * (k + 3)) % 200 - 100) / 200 }
            if k % 2 == 0 { bank.append(saw) } else { bank.append(left: saw, right: saw.reversed()) }
        }
        var regions: [Region] = []
        for k in 0..<12 {
            var r = Region(sampleIndex: k % 6)
            r.keyRange = (36 + 6 * k)...(41 + 6 * k)
            r.pitchKeycenter = 38 + 6 * k + k % 3
            r.velocityRange = k % 2 == 0 ? 1...80 : 60...127
            r.velocityGains = (0..<128).map { Float($0) / 127 }
            r.envelope = Envelope(attack: 0.002, hold: 0.01, decay: 0.1, sustain: 0.5, release: 0.05)
            r.loopMode = [.continuous, .sustain, .oneShot, .noLoop][k % 4]
            r.loopStart = 1_000
            r.loopEnd = 1_000 + 37 * (k + 1)
            r.sequenceLength = k % 3 == 0 ? 2 : 1
            r.sequencePosition = 1
            r.randomHigh = k == 5 ? 0.5 : 1
            r.group = k == 7 ? 3 : 0
            r.offBy = k == 8 ? 3 : 0
            r.controllerRanges = k == 9 ? [1: 0...100] : [:]
            r.keyswitch = k == 10 ? 24 : nil
            r.triggersOnRelease = k == 11
            r.pan = Double(k - 6) / 6
            r.reverbSend = k % 2 == 0 ? Float(k + 1) / 10 : 0
            if k % 3 == 2 {
                r.filter = .lowPass2
                r.cutoff = 2_000
                r.modulation = VoiceModulation(
                    envelope: ModulationEnvelope(delay: 0.001, attack: 0.01, hold: 0.01, decay: 0.1, sustain: 0.3),
                    envelopeToPitchCents: k % 2 == 0 ? 700 : -1_200, envelopeToCutoffCents: 2_400,
                    modulationLFOToCutoffCents: 600, modulationLFOToVolumeDecibels: 3,
                    vibratoLFO: ModulationLFO(frequency: 5), vibratoLFOToPitchCents: 50)
                if k % 2 == 1 {
                    // By sfizz's rules, as an SFZ file's: an envelope of the cutoff's own, waves,
                    // a fade and the filter LFO.
                    r.modulation!.rules = .sfz
                    r.modulation!.envelope.start = 0.2
                    r.modulation!.cutoffEnvelope = ModulationEnvelope(attack: 0.02, decay: 0.05, sustain: 0)
                    r.modulation!.vibratoLFO.wave = .sine
                    r.modulation!.vibratoLFO.fade = 0.1
                    r.modulation!.filterLFO = ModulationLFO(delay: 0.01, frequency: 3)
                    r.modulation!.filterLFOToCutoffCents = 300
                }
            }
            if k % 4 == 1 {
                r.filter = .lowPass2
                r.noteModulators = NoteModulators(modulators: [
                    Modulator(source: .velocity, curve: Modulator.linear, amount: -2_400, destination: .cutoffCents),
                    Modulator(source: .key, curve: Modulator.linear, amount: 50, destination: .pitchCents),
                    Modulator(
                        source: .controller(1), curve: Modulator.linear, amountSource: .velocity,
                        amountCurve: Modulator.linear, amount: -6, destination: .levelDecibels),
                    Modulator(
                        source: .controller(2), curve: Modulator.linear, amount: 6, destination: .resonanceDecibels),
                    Modulator(
                        source: .channelPressure, curve: Modulator.linear, amount: 50,
                        destination: .vibratoLFOToPitchCents),
                    Modulator(source: .keyPressure, curve: Modulator.linear, amount: 1_200, destination: .cutoffCents),
                    Modulator(
                        source: .pitchWheel, curve: (0..<16_384).map { Double($0) / 16_384 }, amount: 100,
                        destination: .pitchCents),
                ])
            }
            regions.append(r)
        }
        var config = EngineConfiguration(sampleRate: 48_000, polyphony: 24)
        config.interpolation = quality
        var instrument = Instrument(keys: [])
        instrument.regions = regions
        instrument.keyswitchRange = 24...25
        instrument.followsPitchBend = true
        instrument.reverb = ReverbSettings(preset: .hall, mix: 0.3)
        instrument.linearReverbSend = true
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        let block = 64
        let output = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer {
            output.deallocate()
            right.deallocate()
        }
        var frame: Int64 = 0
        bellkeys_allocations_start()
        for b in 0..<4_000 {
            let note = 24 + (b * 7) % 100
            e.enqueue(.noteOn(frame: frame + Int64(b % block), note: note, velocity: 1 + b % 127))
            if b % 3 == 0 { e.enqueue(.noteOff(frame: frame + 5, note: note)) }
            if b % 70 == 0 { e.enqueue(.control(frame: frame, controller: 64, value: (b / 70) % 2 * 127)) }
            if b % 90 == 0 { e.enqueue(.control(frame: frame, controller: 1, value: b % 128)) }
            if b % 500 == 0 { e.enqueue(.control(frame: frame, controller: 123, value: 0)) }
            if b % 30 == 0 { e.enqueue(.pitchBend(frame: frame + 7, value: (b * 131) % 16_384)) }
            if b % 11 == 0 { e.enqueue(.channelPressure(frame: frame + 3, value: b % 128)) }
            if b % 13 == 0 { e.enqueue(.keyPressure(frame: frame + 9, note: note, value: b % 128)) }
            if b % 40 == 0 { e.enqueue(.control(frame: frame + 2, controller: 91, value: (b * 3) % 128)) }
            if b % 2 == 0 {
                e.render(into: output, frameCount: block)
            } else {
                e.render(left: output, right: right, frameCount: block)
            }
            frame += Int64(block)
        }
        let allocations = bellkeys_allocations_stop()
        #expect(allocations == 0)
        #expect(e.stolenVoices.load(ordering: .relaxed) > 0)
        #expect(e.peakVoiceCount.load(ordering: .relaxed) > 24)
    }

    /// Sets switched by program change and bank select (a missing program too) while voices of
    /// every set ring, each set in its own room (dry, a church, a room) and rooms chosen live:
    /// three sets (mapped keys; pitched regions with a keyswitch; the keys again, in a set of a
    /// bank of its own), thousands of blocks: the render thread must not allocate once.
    @Test func switchingSetsNeverAllocates() {
        let bank = SampleBank(sampleRate: 48_000)
        for k in 0..<4 { bank.append((0..<9_600).map { i in Float((i * (k + 3)) % 200 - 100) / 200 }) }
        let keys = (0..<13).map {
            KeySettings(note: 60 + $0, sampleIndex: $0 % 4, noteOff: $0 % 2 == 0 ? .ring : .damp(releaseSeconds: 0.05))
        }
        var regions = Instrument(keys: [])
        regions.regions = (0..<4).map { k in
            var r = Region(sampleIndex: k)
            r.keyRange = (36 + 12 * k)...(47 + 12 * k)
            r.pitchKeycenter = 40 + 12 * k
            r.envelope = Envelope(attack: 0.002, decay: 0.1, sustain: 0.5, release: 0.05)
            r.keyswitch = k == 3 ? 24 : nil
            return r
        }
        regions.keyswitchRange = 24...25
        regions.followsPitchBend = true
        regions.reverb = ReverbSettings(preset: .church, mix: 0.4)
        let sets = InstrumentSets(sets: [
            InstrumentSet(name: "keys", program: 0, instrument: Instrument(keys: keys)),
            InstrumentSet(name: "regions", program: 1, instrument: regions),
            InstrumentSet(
                name: "banked", program: 1, bank: 5,
                instrument: Instrument(keys: keys, reverb: ReverbSettings(preset: .room, mix: 0.3))),
        ])
        var config = EngineConfiguration(sampleRate: 48_000, polyphony: 24)
        config.roomsToChoose = true
        let e = Engine(bank: bank, sets: sets, configuration: config)
        // (Made before counting: finding a room is the control thread's work.)
        let roomEvents =
            (0..<3).map { e.roomEvent(set: $0, ReverbSettings(preset: .hall, mix: 0.4), frame: 0)! }
            + (0..<3).map { e.roomEvent(set: $0, .off, frame: 0)! }
        let block = 64
        let output = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { output.deallocate() }
        var frame: Int64 = 0
        bellkeys_allocations_start()
        for b in 0..<4_000 {
            let note = 24 + (b * 7) % 80
            if b % 5 == 0 { e.enqueue(.control(frame: frame, controller: 32, value: (b / 5) % 3 == 0 ? 5 : 0)) }
            if b % 5 == 0 { e.enqueue(.programChange(frame: frame + 1, program: (b / 5) % 4)) }
            e.enqueue(.noteOn(frame: frame + Int64(b % block), note: note, velocity: 1 + b % 127))
            if b % 3 == 0 { e.enqueue(.noteOff(frame: frame + 5, note: note)) }
            if b % 90 == 0 { e.enqueue(.pitchBend(frame: frame, value: (b * 61) % 16_384)) }
            if b % 110 == 0 { e.enqueue(.control(frame: frame + 2, controller: 91, value: (b * 53) % 128)) }
            if b % 130 == 0 {
                var event = roomEvents[(b / 130) % 6]
                event.frame = frame + 7
                e.enqueue(event)
            }
            if b % 1_000 == 999 { e.enqueue(.control(frame: frame, controller: 120, value: 0)) }
            e.render(into: output, frameCount: block)
            frame += Int64(block)
        }
        let allocations = bellkeys_allocations_stop()
        #expect(allocations == 0)
        #expect(e.missingPrograms.load(ordering: .relaxed) > 0)
        #expect(e.peakVoiceCount.load(ordering: .relaxed) > 24)
    }

    /// The counter itself works: otherwise the test above would prove nothing.
    @Test func allocationCounterSeesAnAllocation() {
        bellkeys_allocations_start()
        let array = [Int](repeating: 1, count: Int.random(in: 100...200))
        let count = bellkeys_allocations_stop()
        #expect(array.count >= 100)
        #expect(count >= 1)
    }
}
