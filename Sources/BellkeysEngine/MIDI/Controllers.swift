import BellkeysModel
import Synchronization

// Note-offs and controllers: what each MIDI message does to the voices and the channel buses.
extension Engine {
    @_noLocks
    func noteOff(channel: Int, note: Int) {
        let velocity = Int(midi.noteVelocities[128 * channel + note])
        if velocity > 0 {
            midi.noteVelocities[128 * channel + note] = 0
            midi.heldKeyCounts[channel] -= 1
        }
        letGo(channel: channel, note: note)
        let releases = table.releaseCandidateStarts + 129 * Int(midi.noteSets[128 * channel + note])
        if velocity > 0, releases[note] != releases[note + 1] {
            // Release samples of the set the key was struck in, at the velocity it was struck with.
            _ = startRegions(
                releases, table.releaseCandidates, channel: channel, note: note, velocity: velocity, delay: 0)
        }
    }

    /// What a note-off does to the voices of a key: each still held is let go of, and released
    /// (or held by the sustain pedal) if its key damps.
    @_noLocks
    func letGo(channel: Int, note: Int) {
        let sustain = midi.channels[channel].sustain
        for i in 0..<activeCount {
            let slot = Int(pool.active[i])
            guard pool.voices[slot].channel == channel, pool.voices[slot].note == note,
                pool.voices[slot].keyDown
            else { continue }
            pool.voices[slot].keyDown = false
            guard pool.voices[slot].damp else { continue }
            if sustain { pool.voices[slot].sustained = true } else { release(slot: slot) }
        }
    }

    @_noLocks
    func controlChange(channel: Int, controller: Int, value: Int) {
        midi.controllerValues[128 * channel + controller] = UInt8(value)
        // Literal cases: matching named constants or a range calls out of the module.
        switch controller {
        case 7: // channel volume
            midi.channels[channel].volume = value
            updateBus(channel: channel)
        case 11: // expression
            midi.channels[channel].expression = value
            updateBus(channel: channel)
        case 10: // pan: the channel's whole stereo picture moves, by the same law as a key's pan
            guard table.followsPanController else { break }
            let frames = rampFrames(channel: channel)
            mixer.channels[channel].panLeft.move(to: mixer.panTable[2 * value], frames: frames)
            mixer.channels[channel].panRight.move(to: mixer.panTable[2 * value + 1], frames: frames)
            pannedChannels |= 1 << UInt16(channel)
            settlePan(channel: channel)
        case 91: // reverb send
            mixer.channels[channel].send.move(
                to: sendGain(channel: channel, value: value), frames: rampFrames(channel: channel))
        case 64: // sustain pedal
            let down = value >= 64
            midi.channels[channel].sustain = down
            if !down { releaseSustained(channel: channel) }
        case 120: // all sound off: the channel's bells, and the rooms' tails (shared by all)
            for i in 0..<activeCount where pool.voices[Int(pool.active[i])].channel == channel {
                fade(slot: Int(pool.active[i]))
            }
            for r in 0..<mixer.roomCount where mixer.roomIsWet[r] { mixer.rooms[r].silence(frames: pool.fadeFrames) }
        case 0: midi.channels[channel].bankHigh = value // bank select, for the next program change
        case 32: midi.channels[channel].bankLow = value
        case 101: midi.channels[channel].parameterHigh = value // RPN
        case 100: midi.channels[channel].parameterLow = value
        case 6, 38: // data entry: RPN 0 is the pitch bend range (semitones, then cents)
            guard midi.channels[channel].parameterHigh == 0, midi.channels[channel].parameterLow == 0 else { break }
            let cents = midi.channels[channel].bendRangeCents
            let range = controller == 6 ? value * 100 + cents % 100 : cents / 100 * 100 + min(value, 99)
            midi.channels[channel].bendRangeCents = min(range, 2_400)
            if controller == 6 { midi.channels[channel].bendRangeSemitones = value }
            if midi.channels[channel].bend != 8192 { bend(channel: channel, value: midi.channels[channel].bend) }
            sourceMoved(channel: channel, source: -7) // ModulatorTerm.pitchWheelRange
        case 121: // reset all controllers
            resetControllerValues(channel: channel)
            if midi.channels[channel].bend != 8192 { bend(channel: channel, value: 8192) }
            midi.channels[channel].expression = 127
            midi.channels[channel].sustain = false
            releaseSustained(channel: channel)
            updateBus(channel: channel)
        case 123, 124, 125, 126, 127: // all notes off, and the mode messages
            // All-notes-off (and the mode messages, which imply it): every damped key on the
            // channel is released, sustained or not. Ringing keys ring on. No key is held after
            // it (their note-offs start no release samples).
            (midi.noteVelocities + 128 * channel).update(repeating: 0, count: 128)
            midi.heldKeyCounts[channel] = 0
            for i in 0..<activeCount {
                let slot = Int(pool.active[i])
                guard pool.voices[slot].channel == channel else { continue }
                pool.voices[slot].keyDown = false
                pool.voices[slot].sustained = false
                if pool.voices[slot].damp { release(slot: slot) }
            }
        default:
            break
        }
        // Modulators reading it (after a reset, reading anything live) are read again; not those
        // of the pedals (64 to 66, 68: FluidSynth reads them only as notes start), nor of the
        // controllers no modulator reads (`reading` in BellkeysFormats' SoundFontModulators).
        switch controller {
        case 121: sourceMoved(channel: channel, source: -3) // ModulatorTerm.none: every source
        case 0, 6, 32, 38, 64, 65, 66, 68, 98, 99, 100, 101, 120, 122, 123, 124, 125, 126, 127: break
        default: sourceMoved(channel: channel, source: controller)
        }
    }

    /// A program change on `channel`: the set the channel's next notes play, chosen by the sets'
    /// rule (`ProgramSelection`). For a map's: under the channel's bank select (CC0 × 128 +
    /// CC32), the first set with this program and that bank, else the first with this program
    /// and no bank of its own. For a whole SoundFont's: FluidSynth's choice, looked up in
    /// `fontPrograms`. Voices already sounding ring on in their own set. A program no set has
    /// leaves the channel as it was, and it and a substitute are counted (`missingPrograms`,
    /// `lastMissingProgram`). Ignored by a single instrument.
    @_noLocks
    func programChange(channel: Int, program: Int) {
        guard table.followsProgramChange else { return }
        let choice = programChoice(
            channel: channel, program: program, bankHigh: midi.channels[channel].bankHigh,
            bankLow: midi.channels[channel].bankLow)
        if choice.set < 0 || choice.substituted {
            lastMissingProgram.relaxedStore(channel << 21 | choice.bank << 7 | program)
            missingPrograms.relaxedAdd(1)
        }
        guard choice.set >= 0 else { return }
        midi.channels[channel].set = choice.set
        publishSets()
    }

    /// The set a program change to `program` on `channel`, under bank select `bankHigh` (CC0)
    /// and `bankLow` (CC32), chooses by the sets' rule (-1: none), the bank it asks for, and
    /// whether the set is a whole font's substitute. Reads only what never changes.
    @_noLocks
    func programChoice(channel: Int, program: Int, bankHigh: Int, bankLow: Int) -> (
        set: Int, bank: Int, substituted: Bool
    ) {
        if table.selectsAsSoundFont {
            let bank = channel == table.drumChannel ? 128 : bankHigh
            let entry = Int(table.fontPrograms[128 * bank + program])
            return (entry < 0 ? -1 : entry & 65_535, bank, entry >= 65_536)
        }
        let bank = bankHigh << 7 | bankLow
        var any = -1
        for k in 0..<table.setCount where table.sets[k].program == program {
            if table.sets[k].bank == bank { return (k, bank, false) }
            if any < 0, table.sets[k].bank < 0 { any = k }
        }
        return (any, bank, false)
    }

    /// The set a program change to `program` on `channel` under bank select `bankHigh` (CC0)
    /// and `bankLow` (CC32) would choose (`programChange`'s rule), or nil (none has it, or the
    /// engine plays one instrument). Thread: any.
    public func set(channel: Int, program: Int, bankHigh: Int, bankLow: Int) -> Int? {
        guard table.followsProgramChange else { return nil }
        let found = programChoice(
            channel: channel & 15, program: program & 127, bankHigh: bankHigh & 127, bankLow: bankLow & 127
        ).set
        return found >= 0 ? found : nil
    }

    /// Puts `channel` on set `set` at once, in an engine no render thread has started (a
    /// reloaded map's: the loop's channel on the set it played). Thread: control, before the
    /// engine is handed over.
    public func presetSet(channel: Int, set: Int) {
        chooseSet(channel: channel & 15, set: set)
    }

    /// The event that puts a channel on a set by its index, whatever the bank select (a phrase
    /// loop's repeats start in the set the phrase did: `PhraseLooper`): MIDI's undefined system
    /// status 0xF5, which no input passes on; data1 the channel, data2 the set.
    public static let setStatus: UInt8 = 0xF5

    /// The set event (`setStatus`) that puts `channel` on `set` (0...4095) at `frame`: the
    /// channel in the first data byte's low 4 bits, the set's high 4 bits in its high 4, and
    /// the set's low 8 bits in the second (`EngineEvent.chosenSet`). Thread: any.
    public static func setEvent(frame: Int64, channel: Int, set: Int) -> EngineEvent {
        EngineEvent(
            frame: frame, status: setStatus, data1: UInt8(channel & 15 | (set >> 8 & 15) << 4),
            data2: UInt8(set & 255))
    }

    /// The most sets a set event names.
    public static let maximumSetEvents = InstrumentSets.maximumSets

    /// `channel`'s next notes play set `set` (`setStatus`). Ignored by a single instrument, and
    /// for a set the engine does not have.
    @_noLocks
    func chooseSet(channel: Int, set: Int) {
        guard table.followsProgramChange, set < table.setCount else { return }
        midi.channels[channel].set = set
        publishSets()
    }

    /// Publishes each channel's set (`currentSet(channel:)`): 16 bits a channel, four channels
    /// a word.
    @_noLocks
    func publishSets() {
        func word(_ first: Int) -> UInt64 {
            var bits: UInt64 = 0
            for k in 0..<4 { bits |= UInt64(midi.channels[first + k].set & 65_535) << (16 * k) }
            return bits
        }
        channelSets0.relaxedStore(word(0))
        channelSets1.relaxedStore(word(4))
        channelSets2.relaxedStore(word(8))
        channelSets3.relaxedStore(word(12))
    }

    /// The event `chooseRoom` queues: MIDI's undefined system status 0xF4, which no input
    /// passes on (`EngineEvent(midi:)`, MIDI files and the sequencer take channel messages only).
    static let roomStatus: UInt8 = 0xF4

    /// Set `set`'s next voices ring in room `room` (`chooseRoom`).
    @_noLocks
    func setRoom(set: Int, room: Int) {
        guard set < table.setCount, room < mixer.roomCount else { return }
        mixer.setRooms[set] = room
    }

    /// Pitch bend on `channel`: every pitched voice there moves to its pitch × the bend, at
    /// once (at the event's frame), if its set follows pitch bend.
    @_noLocks
    func bend(channel: Int, value: Int) {
        midi.channels[channel].bend = value
        let factor = bendFactor(channel: channel)
        for i in 0..<activeCount {
            let slot = Int(pool.active[i])
            guard pool.voices[slot].channel == channel, pool.voices[slot].isPitched else { continue }
            let region = Int(pool.voices[slot].region)
            let set = table.sets[table.regions[region].set]
            guard set.followsPitchBend else { continue }
            if table.regions[region].hasBendRange || set.pitchBendReach != 1 {
                retune(slot: slot, factor: bendFactor(channel: channel, region: region))
            } else {
                retune(slot: slot, factor: factor)
            }
        }
        // Modulators reading the wheel, after the retunes: what they move waits for the tick.
        sourceMoved(channel: channel, source: -6) // ModulatorTerm.pitchWheel
    }

    /// The ratio of `channel`'s bend for a voice of `region`: by the region's own range if it
    /// has one (as sfizz reads `bend_up` and `bend_down`: the wheel's ±8191 steps from the
    /// centre, the lowest value counted as −8191, are ±1 of the range up or down), else by the
    /// channel's, times its set's reach (`Instrument.pitchBendReach`).
    @_noLocks
    func bendFactor(channel: Int, region: Int) -> Double {
        guard table.regions[region].hasBendRange else {
            let reach = table.sets[table.regions[region].set].pitchBendReach
            if reach == 1 { return bendFactor(channel: channel) }
            let range = Double(midi.channels[channel].bendRangeCents) * reach
            return exp2Fast(Double(midi.channels[channel].bend - 8192) / 8192 * range / 1200)
        }
        let value = Double(max(midi.channels[channel].bend - 8192, -8191)) / 8191
        let cents =
            value >= 0 ? value * table.regions[region].bendUpCents : -value * table.regions[region].bendDownCents
        return exp2Fast(cents / 1200)
    }

    /// The ratio of `channel`'s bend: (value − 8192) / 8192 of its range, in cents (so 16383
    /// is 8191/8192 of the range up, 0 the whole range down).
    @_noLocks
    func bendFactor(channel: Int) -> Double {
        let cents = Double(midi.channels[channel].bend - 8192) / 8192 * Double(midi.channels[channel].bendRangeCents)
        return exp2Fast(cents / 1200)
    }

    /// Bends a voice by `factor` (the wheel's): its increment becomes its own × `factor` (× its
    /// modulation's, for a modulated voice, which keeps the wheel's for its next tick).
    @_noLocks
    func retune(slot: Int, factor: Double) {
        guard pool.pitchedVoices[slot].isModulated else {
            tune(&pool.pitchedVoices[slot], factor: factor)
            return
        }
        pool.modulatedVoices[slot].bend = factor
        tune(&pool.pitchedVoices[slot], factor: factor * pool.modulatedVoices[slot].pitchFactor)
    }

    /// Sets a voice's increment to its own × `factor`, and the kernel that increment needs (read
    /// frame by frame only at exactly its own rate on a whole frame).
    @_noLocks
    func tune(_ voice: inout PitchedVoice, factor: Double) {
        let base = voice.baseIncrement
        let increment = factor == 1 ? base : UInt64(Double(base) * factor + 0.5)
        voice.increment = max(1, increment)
        if increment == 1 << 32, UInt32(truncatingIfNeeded: voice.phaseFrames) == 0 {
            voice.kernel = -1
            return
        }
        var k = 0
        while k < table.kernelLevelCount - 1, increment > table.kernelLevels[k].highestIncrement { k += 1 }
        voice.kernel = Int32(k)
    }

    @_noLocks
    func releaseSustained(channel: Int) {
        for i in 0..<activeCount {
            let slot = Int(pool.active[i])
            guard pool.voices[slot].channel == channel, pool.voices[slot].sustained else { continue }
            pool.voices[slot].sustained = false
            release(slot: slot)
        }
    }

    /// Takes `channel` off the panned list once its pan is at rest at the centre.
    @_noLocks
    func settlePan(channel: Int) {
        let left = mixer.channels[channel].panLeft, right = mixer.channels[channel].panRight
        if left.framesLeft == 0, right.framesLeft == 0, left.value == 1, right.value == 1 {
            pannedChannels &= ~(1 << UInt16(channel))
        }
    }

    @_noLocks
    func busTarget(channel: Int) -> Float {
        mixer.controllerGains[midi.channels[channel].volume] * mixer.controllerGains[midi.channels[channel].expression]
            * masterGain
    }

    @_noLocks
    func updateBus(channel: Int) {
        mixer.channels[channel].bus.move(to: busTarget(channel: channel), frames: rampFrames(channel: channel))
    }

    /// CC91 at `value` as `channel`'s send gain: by its law (`Mixer.linearSends`), FluidSynth's
    /// straight line (value / 128) or the square law of CC7.
    @_noLocks
    func sendGain(channel: Int, value: Int) -> Float {
        mixer.linearSends & (1 << UInt16(channel)) != 0 ? Float(value) / 128 : mixer.controllerGains[value]
    }

    /// Frames over which a gain of `channel` moves: the ramp, or at once while nothing sounds there.
    @_noLocks
    func rampFrames(channel: Int) -> Int {
        pool.channelVoiceCounts[channel] == 0 ? 0 : configuration.rampFrames
    }
}

extension Engine {
    /// Reset all controllers (CC121) in the values modulators and controller ranges read, as
    /// FluidSynth resets them (`fluid_channel_init_ctrl`, and MIDI's recommended practice): every
    /// controller below 120 to 0 but bank select, volume, balance, pan (each with its LSB), the
    /// sound controllers (70 to 79) and the effects depths (91 to 95); expression to 127; the
    /// parameter numbers (98 to 101) to none (127); the channel's and its keys' pressure to 0.
    /// Thread: render. Real-time safe.
    @_noLocks
    func resetControllerValues(channel: Int) {
        let values = midi.controllerValues + 128 * channel
        for n in 0..<120 {
            if n == 0 || n == 32 || n == 7 || n == 39 || n == 8 || n == 40 || n == 10 || n == 42 { continue }
            if n >= 70, n <= 79 { continue }
            if n >= 91, n <= 95 { continue }
            values[n] = n >= 98 && n <= 101 ? 127 : 0
        }
        values[11] = 127
        values[43] = 127
        midi.channels[channel].pressure = 0
        (midi.keyPressures + 128 * channel).update(repeating: 0, count: 128)
    }
}
