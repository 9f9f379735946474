import Synchronization

// Voices start, release, fade, are stolen and end here; slots are preallocated and reused.
extension Engine {
    @_noLocks
    func noteOn(channel: Int, note: Int, velocity: Int, delay: Int) {
        let set = midi.channels[channel].set
        if note >= table.sets[set].keyswitchLow, note <= table.sets[set].keyswitchHigh {
            // A keyswitch: it chooses the set's articulation and does not sound.
            midi.keyswitches[set] = note
            return
        }
        // A key struck again before its note-off is still one key held (sfizz would count it
        // twice, and play `legato` regions for a lone key).
        if midi.noteVelocities[128 * channel + note] == 0 {
            midi.heldKeyCounts[channel] += 1
        } else if table.sets[set].restrikeReleases {
            letGo(channel: channel, note: note)
        }
        midi.noteVelocities[128 * channel + note] = UInt8(velocity)
        midi.noteSets[128 * channel + note] = UInt16(truncatingIfNeeded: set)
        let started = startRegions(
            table.candidateStarts + 129 * set, table.candidates, channel: channel, note: note, velocity: velocity,
            delay: delay)
        if !started { ignoredNotes.relaxedAdd(1) }
    }

    /// Starts every region of `note`'s list (`starts`, `list`: the note-on or the release
    /// candidates) that its selection lets sound; returns whether any did. Round robin counts a
    /// strike of the region's keys before anything else is asked (as sfizz counts); one random
    /// value is drawn per call. Thread: render. Real-time safe.
    @_noLocks
    func startRegions(
        _ starts: UnsafePointer<Int32>, _ list: UnsafePointer<Int32>, channel: Int, note: Int,
        velocity: Int, delay: Int
    ) -> Bool {
        var started = false
        noteOnSerial = nextSerial
        let random = nextRandom()
        let first = Int(starts[note]), end = Int(starts[note + 1])
        for c in first..<end {
            let r = Int(list[c])
            let region = table.regions[r]
            if region.sequenceLength > 1 {
                let count = midi.sequenceCounters[r]
                midi.sequenceCounters[r] = (count + 1) % region.sequenceLength
                if count != region.sequencePosition - 1 { continue }
            }
            guard velocity >= region.velocityLow, velocity <= region.velocityHigh else { continue }
            guard random >= region.randomLow, random < region.randomHigh else { continue }
            if region.keyswitch >= 0, region.keyswitch != midi.keyswitches[region.set] { continue }
            if region.controllerRangeCount > 0, !controllersAllow(region, channel: channel) { continue }
            if region.heldKeys != 0 {
                // `first` sounds with no other key of the channel held, `legato` with one.
                let othersHeld = midi.heldKeyCounts[channel] > 1
                if othersHeld == (region.heldKeys == 1) { continue }
            }
            startVoice(region: r, channel: channel, note: note, velocity: velocity, delay: delay)
            started = true
        }
        return started
    }

    /// Whether every controller range of `region` holds the channel's controller now.
    @_noLocks
    func controllersAllow(_ region: RegionSlot, channel: Int) -> Bool {
        for k in region.controllerRangeStart..<(region.controllerRangeStart + region.controllerRangeCount) {
            let value = midi.controllerValues[128 * channel + Int(table.controllerRangeNumbers[k])]
            // (two ifs, not ||: the operator's autoclosure would retain self)
            if value < table.controllerRangeLows[k] { return false }
            if value > table.controllerRangeHighs[k] { return false }
        }
        return true
    }

    /// The next value of the random generator, 0 ..< 1 (SplitMix64: the same sequence every run).
    @_noLocks
    func nextRandom() -> Double {
        randomState &+= 0x9E37_79B9_7F4A_7C15
        var z = randomState
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) * 0x1p-53
    }

    /// Starts the envelope of a pitched voice of region `r`, if it has one: its region's, or its
    /// own when its note-on modulators move its times (`times`, their sums: `countedEnvelope`).
    /// Thread: render. Real-time safe.
    @_noLocks
    func startVoiceEnvelope(
        slot: Int, region r: Int, _ pitched: inout PitchedVoice, times: SIMD8<Double>, strike: Float
    ) {
        let key = table.regions[r]
        if key.hasTimedEnvelope {
            pool.voiceEnvelopes[slot] = countedEnvelope(key.envelopeTimecents + times)
            pitched.ownsEnvelope = true
            startEnvelope(&pool.voices[slot].gain, &pitched.envelope, pool.voiceEnvelopes[slot], strike: strike)
        } else if key.hasEnvelope {
            startEnvelope(&pool.voices[slot].gain, &pitched.envelope, key.envelope, strike: strike)
        }
    }

    /// Starts the modulation of a voice of region `r` (which has it) `delay` frames into the
    /// segment: its note-on modulators' depths (`sums`), and its own envelope's stages when they
    /// move its times; idle if it may be and nothing moves (`ModulatedVoice.idle`). Thread: render.
    /// Real-time safe.
    @_noLocks
    func startModulation(slot: Int, region r: Int, _ sums: NoteOnSums, delay: Int) {
        pool.modulatedVoices[slot] = ModulatedVoice()
        pool.modulatedVoices[slot].depths = sums.depths
        pool.modulatedVoices[slot].startLevel = sums.levelFactor
        let key = table.regions[r]
        pool.modulatedVoices[slot].pitchFraction = key.modulatorCount > 0 ? sums.pitchFraction : key.pitchFraction
        if key.modulation.sfz { pool.sfzVoices[slot] = SFZVoice(table.sfzModulations[r]) }
        if key.mayIdle {
            let depths = heldDepths(key.modulation, sums.depths)
            pool.modulatedVoices[slot].idle = depths == SIMD8()
            pool.modulatedVoices[slot].startFrame = currentFrame + Int64(delay)
        }
        if key.hasTimedModulation {
            pool.voiceModulations[slot] = countedModulation(
                key.modulation, key.modulationTimecents + sums.times.highHalf)
            pool.modulatedVoices[slot].ownsTicks = true
        }
    }

    /// Where the increments of region `key`'s voices on `pitchNote` (the note it plays at) are:
    /// its increment in `RegionTable.increments`, its kernel in `incrementKernels`. Thread: render.
    @_noLocks
    func incrementIndex(_ key: RegionSlot, pitchNote: Int) -> Int {
        key.incrementBase + min(max(pitchNote, key.keyLow), key.keyHigh) - key.keyLow
    }

    /// Starts a voice of region `r` for a note. Thread: render. Real-time safe.
    @_noLocks
    func startVoice(region r: Int, channel: Int, note: Int, velocity: Int, delay: Int) {
        let key = table.regions[r]
        if key.group != 0 {
            for i in 0..<activeCount where pool.voices[Int(pool.active[i])].chokeGroup == key.group {
                let slot = Int(pool.active[i])
                if pool.voices[slot].serial >= noteOnSerial { continue }
                if table.sets[key.set].chokesWithinChannel, pool.voices[slot].channel != channel { continue }
                // A set's groups are its own: another set's voices of the same number ring on.
                if table.regions[Int(pool.voices[slot].region)].set != key.set { continue }
                let stopped = table.regions[Int(pool.voices[slot].region)]
                if stopped.offReleases, stopped.hasEnvelope {
                    release(slot: slot)
                } else {
                    fade(slot: slot, frames: stopped.offFrames)
                }
            }
        }
        if soundingCount >= configuration.polyphony { stealVoice() }
        if freeCount == 0 { cutQuietestFadingVoice() }
        freeCount -= 1
        let slot = Int(pool.free[freeCount])
        var strike = key.gain * table.velocityGains[128 * r + velocity]
        var sums = NoteOnSums()
        if key.modulatorCount > 0 {
            sums = noteOnSums(region: r, channel: channel, note: note, velocity: velocity)
            strike *= noteOnLevel(&sums, region: r, velocityGain: table.velocityGains[128 * r + velocity])
        }
        pool.voices[slot] = Voice(
            frames: key.frames, frameCount: key.frameCount,
            gain: Ramp(strike), serial: nextSerial,
            releaseFrames: key.releaseFrames, chokeGroup: key.offBy,
            channel: UInt8(channel), note: UInt8(note), damp: key.damp)
        pool.voices[slot].delay = delay
        pool.voices[slot].region = Int32(r)
        pool.voices[slot].velocity = UInt8(velocity)
        pool.voices[slot].room = UInt8(truncatingIfNeeded: mixer.setRooms[key.set])
        if !key.isCentred {
            pool.voices[slot].isPanned = true
            pool.voices[slot].leftGain = key.leftGain
            pool.voices[slot].rightGain = key.rightGain
        }
        // The note it plays at: itself, or where the set folds it (its voice still answers to `note`).
        let pitchNote = Int(table.soundsAs[128 * key.set + note])
        if key.isPitched {
            let k = incrementIndex(key, pitchNote: pitchNote)
            pool.voices[slot].isPitched = true
            var pitched = PitchedVoice()
            pitched.isStereo = key.isStereo
            pitched.phaseFrames = UInt64(key.offset) << 32
            if sums.times[6] != 0 || sums.times[7] != 0 {
                pitched.phaseFrames = UInt64(startFrame(sums, region: r)) << 32
            }
            pitched.increment = table.increments[k]
            pitched.baseIncrement = table.increments[k]
            pitched.kernel = table.incrementKernels[k]
            if sums.pitchCents != 0 {
                pitched.baseIncrement = movedIncrement(pitched.baseIncrement, cents: sums.pitchCents)
                tune(&pitched, factor: 1)
            }
            pitched.loop = key.loop
            pitched.holdsInDelay = key.holdsInDelay
            pitched.looping = key.loop.is(.continuous) || key.loop.is(.sustain)
            pitched.loopStart = key.loopStart
            pitched.loopEnd = key.loopEnd
            startVoiceEnvelope(slot: slot, region: r, &pitched, times: sums.times.lowHalf, strike: strike)
            if key.hasModulation {
                pitched.isModulated = true
                startModulation(slot: slot, region: r, sums, delay: delay)
            }
            pool.pitchedVoices[slot] = pitched
            if table.sets[key.set].followsPitchBend, midi.channels[channel].bend != 8192 {
                retune(slot: slot, factor: bendFactor(channel: channel, region: r))
            }
            if key.filterKind != 0 { startFilter(slot: slot, region: r, note: pitchNote, velocity: velocity, sums) }
            if key.filterKind == 0, table.hasTimbre {
                // Velocity timbre on a pitched voice (a map's key that follows pitch bend): the
                // same two one-pole stages as `mixFilteredVoice`, as the voice's filter.
                let c = table.timbreTable[128 * r + velocity]
                if c < 1 {
                    pool.pitchedVoices[slot].filterKind = 3
                    pool.pitchedVoices[slot].filterCoefficients = SIMD8(c, 0, 0, 0, 0, 0, 0, 0)
                    pool.pitchedVoices[slot].filterState = SIMD4()
                }
            }
        } else if table.hasTimbre {
            let c = table.timbreTable[128 * r + velocity]
            if c < 1 {
                pool.voices[slot].isFiltered = true
                pool.voices[slot].lowpass = c
            }
        }
        nextSerial &+= 1
        pool.active[activeCount] = Int32(slot)
        activeCount += 1
        soundingCount += 1
        pool.channelVoiceCounts[channel] += 1
        pool.noteVoiceCounts[note] += 1
        if note < 64 { soundingLow |= 1 << UInt64(note) } else { soundingHigh |= 1 << UInt64(note & 63) }
    }

    // MARK: Voice life

    /// Damped note-off: fade over the key's release time.
    @_noLocks
    func release(slot: Int) {
        guard pool.voices[slot].phase.is(.sounding) else { return }
        pool.voices[slot].phase = .releasing
        if pool.voices[slot].isPitched {
            if pool.pitchedVoices[slot].loop.is(.sustain) { pool.pitchedVoices[slot].looping = false }
            if pool.pitchedVoices[slot].isModulated { pool.modulatedVoices[slot].releaseAsked = true }
            let region = Int(pool.voices[slot].region)
            if table.regions[region].hasEnvelope {
                startRelease(
                    pool.voices[slot].gain, &pool.pitchedVoices[slot].envelope,
                    pool.pitchedVoices[slot].ownsEnvelope ? pool.voiceEnvelopes[slot] : table.regions[region].envelope)
                return
            }
        }
        pool.voices[slot].gain.move(to: 0, frames: pool.voices[slot].releaseFrames)
    }

    /// Stolen, choked or silenced: fade over `frames` (0: `fadeSeconds`; a choke may give its
    /// own), or sooner if already nearly silent.
    @_noLocks
    func fade(slot: Int, frames: Int = 0) {
        if pool.voices[slot].phase.is(.fading) { return }
        pool.voices[slot].phase = .fading
        soundingCount -= 1
        // sfizz releases every envelope of a voice it turns off (`Voice::Impl::off`): an SFZ
        // voice choked, stolen or faded over `off_time` glides back as it fades.
        if pool.voices[slot].isPitched, pool.pitchedVoices[slot].isModulated,
            table.regions[Int(pool.voices[slot].region)].modulation.sfz
        {
            pool.modulatedVoices[slot].releaseAsked = true
        }
        if pool.voices[slot].isPitched, !pool.pitchedVoices[slot].envelope.stage.is(.none) {
            // An envelope gives way to the fade: no more pieces, the fade is the last.
            pool.pitchedVoices[slot].envelope.stage = .none
            pool.pitchedVoices[slot].envelope.pieceLeft = Int.max
        }
        // (Not `??` on an optional: its autoclosure would retain self.)
        let ramp = pool.voices[slot].gain, frames = frames > 0 ? frames : pool.fadeFrames
        if ramp.target == 0, ramp.framesLeft > 0, ramp.framesLeft <= frames { return }
        pool.voices[slot].gain.move(to: 0, frames: frames)
    }

    /// Polyphony is full: fade the voice that will be missed least. Releasing voices go first,
    /// then voices whose key is up, then any; the oldest within each.
    @_noLocks
    func stealVoice() {
        var best = -1
        var bestRank = Int.max, bestSerial = UInt64.max
        for i in 0..<activeCount {
            let slot = Int(pool.active[i])
            let v = pool.voices[slot]
            if v.phase.is(.fading) { continue }
            let rank = v.phase.is(.releasing) ? 0 : (v.keyDown || v.sustained ? 2 : 1)
            if rank < bestRank || (rank == bestRank && v.serial < bestSerial) {
                best = slot
                bestRank = rank
                bestSerial = v.serial
            }
        }
        if best >= 0 {
            fade(slot: best)
            stolenVoices.relaxedAdd(1)
        }
    }

    /// Every slot is taken by fading voices: end the quietest now so the new note can start.
    @_noLocks
    func cutQuietestFadingVoice() {
        var best = -1
        var bestGain = Float.infinity
        for i in 0..<activeCount {
            let v = pool.voices[Int(pool.active[i])]
            if v.phase.is(.fading) && abs(v.gain.value) < bestGain {
                best = i
                bestGain = abs(v.gain.value)
            }
        }
        if best < 0 { best = 0 }
        retire(activeIndex: best)
        cutVoices.relaxedAdd(1)
    }

    @_noLocks
    func retire(activeIndex i: Int) {
        let slot = pool.active[i]
        if !pool.voices[Int(slot)].phase.is(.fading) { soundingCount -= 1 }
        pool.channelVoiceCounts[Int(pool.voices[Int(slot)].channel)] -= 1
        let note = Int(pool.voices[Int(slot)].note)
        pool.noteVoiceCounts[note] -= 1
        if pool.noteVoiceCounts[note] == 0 {
            if note < 64 { soundingLow &= ~(1 << UInt64(note)) } else { soundingHigh &= ~(1 << UInt64(note & 63)) }
        }
        activeCount -= 1
        pool.active[i] = pool.active[activeCount]
        pool.free[freeCount] = slot
        freeCount += 1
    }
}
