import Synchronization

// Note-offs and controllers: what each MIDI message does to the voices and the channel buses.
extension Engine {
    @_noLocks
    func noteOff(channel: Int, note: Int) {
        let sustain = channels[channel].sustain
        for i in 0..<activeCount {
            let slot = Int(active[i])
            guard voices[slot].channel == channel, voices[slot].note == note,
                voices[slot].keyDown
            else { continue }
            voices[slot].keyDown = false
            guard voices[slot].damp else { continue }
            if sustain { voices[slot].sustained = true } else { release(slot: slot) }
        }
        if releaseCandidateStarts[note] != releaseCandidateStarts[note + 1] {
            // Release samples, at the velocity the key was struck with.
            let velocity = Int(noteVelocities[128 * channel + note])
            if velocity > 0 {
                noteVelocities[128 * channel + note] = 0
                _ = startRegions(
                    releaseCandidateStarts, releaseCandidates, channel: channel, note: note, velocity: velocity,
                    delay: 0)
            }
        }
    }

    @_noLocks
    func controlChange(channel: Int, controller: Int, value: Int) {
        controllerValues[128 * channel + controller] = UInt8(value)
        // Literal cases: matching named constants or a range calls out of the module.
        switch controller {
        case 7: // channel volume
            channels[channel].volume = value
            updateBus(channel: channel)
        case 11: // expression
            channels[channel].expression = value
            updateBus(channel: channel)
        case 10: // pan: the channel's whole stereo picture moves, by the same law as a key's pan
            guard followsPanController else { break }
            let frames = rampFrames(channel: channel)
            channels[channel].panLeft.move(to: panTable[2 * value], frames: frames)
            channels[channel].panRight.move(to: panTable[2 * value + 1], frames: frames)
            pannedChannels |= 1 << UInt16(channel)
            settlePan(channel: channel)
        case 91: // reverb send
            channels[channel].send.move(to: controllerGains[value], frames: rampFrames(channel: channel))
        case 64: // sustain pedal
            let down = value >= 64
            channels[channel].sustain = down
            if !down { releaseSustained(channel: channel) }
        case 120: // all sound off: the channel's bells, and the room's tail (shared by all)
            for i in 0..<activeCount where voices[Int(active[i])].channel == channel {
                fade(slot: Int(active[i]))
            }
            if hasReverb { reverb.silence(frames: fadeFrames) }
        case 121: // reset all controllers
            channels[channel].expression = 127
            channels[channel].sustain = false
            releaseSustained(channel: channel)
            updateBus(channel: channel)
        case 123, 124, 125, 126, 127: // all notes off, and the mode messages
            // All-notes-off (and the mode messages, which imply it): every damped key on the
            // channel is released, sustained or not. Ringing keys ring on.
            for i in 0..<activeCount {
                let slot = Int(active[i])
                guard voices[slot].channel == channel else { continue }
                voices[slot].keyDown = false
                voices[slot].sustained = false
                if voices[slot].damp { release(slot: slot) }
            }
        default:
            break
        }
    }

    @_noLocks
    func releaseSustained(channel: Int) {
        for i in 0..<activeCount {
            let slot = Int(active[i])
            guard voices[slot].channel == channel, voices[slot].sustained else { continue }
            voices[slot].sustained = false
            release(slot: slot)
        }
    }

    /// Takes `channel` off the panned list once its pan is at rest at the centre.
    @_noLocks
    func settlePan(channel: Int) {
        let left = channels[channel].panLeft, right = channels[channel].panRight
        if left.framesLeft == 0, right.framesLeft == 0, left.value == 1, right.value == 1 {
            pannedChannels &= ~(1 << UInt16(channel))
        }
    }

    @_noLocks
    func busTarget(channel: Int) -> Float {
        controllerGains[channels[channel].volume] * controllerGains[channels[channel].expression]
            * masterGain
    }

    @_noLocks
    func updateBus(channel: Int) {
        channels[channel].bus.move(to: busTarget(channel: channel), frames: rampFrames(channel: channel))
    }

    /// Frames over which a gain of `channel` moves: the ramp, or at once while nothing sounds there.
    @_noLocks
    func rampFrames(channel: Int) -> Int {
        channels[channel].voiceCount == 0 ? 0 : configuration.rampFrames
    }
}
