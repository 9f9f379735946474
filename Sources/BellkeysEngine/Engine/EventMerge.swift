import BellkeysModel
import Synchronization

// How `render` walks the live, scheduled and render-thread queues and applies each event at its frame.
extension Engine {
    /// Renders `frameCount` mono frames into `output`, applying every queued event whose frame
    /// falls inside them at exactly that frame: the centred bells as they are, panned ones
    /// (if any) as the average of the left and right channels. Thread: render. Real-time safe.
    @_noLocks
    public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int) {
        render(left: output, right: nil, frameCount: frameCount)
    }

    /// Renders `frameCount` frames into `left` and `right`, as `render(into:frameCount:)` does;
    /// with no bell panned, `right` is a copy of `left`. Thread: render. Real-time safe.
    @_noLocks
    public func render(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount: Int) {
        render(left: left, right: Optional(right), frameCount: frameCount)
    }

    @_noLocks
    func render(left output: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        let masterBits = masterGainBits.relaxedLoad()
        if masterBits != masterGain.bitPattern {
            masterGain = Float(bitPattern: masterBits)
            for ch in 0..<16 { updateBus(channel: ch) }
        }
        let cancellation = scheduledCancellation.acquiringLoad()
        let cancelledBefore = cancellation >> 5, cancelledChannel = UInt8(cancellation & 31)
        var done = 0
        var rested = true
        while done < frameCount {
            // Blocks lie on a fixed grid of output frames (multiples of maxBlockFrames), however
            // the caller cuts its calls and wherever events split them: the same frames are mixed
            // the same way, so a live period-by-period take equals an offline render with the
            // same block size bit for bit (the JACK tests compare them).
            let block = Int64(configuration.maxBlockFrames)
            var end = min(frameCount, done + Int(block - currentFrame % block))
            while true {
                // The earliest of the three queues' heads: live first on a tie, then scheduled,
                // then the render thread's own.
                var source = 0
                var next = events.peek()
                var planned = scheduled.peek()
                while let skipped = planned, cancelledChannel == 16 || skipped.channel == cancelledChannel,
                    scheduled.headIndex < cancelledBefore
                {
                    scheduled.pop()
                    planned = scheduled.peek()
                }
                if let planned {
                    if let live = next {
                        if planned.frame < live.frame {
                            next = planned
                            source = 1
                        }
                    } else {
                        next = planned
                        source = 1
                    }
                }
                if let own = direct.peek() {
                    if let earlier = next {
                        if own.frame < earlier.frame {
                            next = own
                            source = 2
                        }
                    } else {
                        next = own
                        source = 2
                    }
                }
                guard let event = next else { break }
                let offset = event.frame - currentFrame
                if offset > 0 {
                    guard offset < Int64(end - done) else { break }
                    // See appliesWithinSegment; anything else ends the segment at its frame.
                    if appliesWithinSegment(event) {
                        apply(event, delay: Int(offset))
                        popEvent(from: source)
                        continue
                    }
                    end = done + Int(offset)
                    break
                }
                if offset < 0 { lateEvents.relaxedAdd(1) }
                apply(event, delay: 0)
                popEvent(from: source)
            }
            var rightFromDone: UnsafeMutablePointer<Float>?
            if let right { rightFromDone = right + done }
            if skipsRest, isAtRest {
                restSegment(left: output + done, right: rightFromDone, frameCount: end - done)
            } else {
                renderSegment(left: output + done, right: rightFromDone, frameCount: end - done)
                rested = false
            }
            currentFrame += Int64(end - done)
            done = end
        }
        renderedOnlySilence = rested
        voiceCount.relaxedStore(activeCount)
        if mixer.hasReverb { roomIsQuiet.relaxedStore(roomsAreIdle) }
        soundingNotesLow.relaxedStore(soundingLow)
        soundingNotesHigh.relaxedStore(soundingHigh)
        if activeCount > peakVoiceCount.relaxedLoad() {
            peakVoiceCount.relaxedStore(activeCount)
        }
    }

    /// Removes the head of queue `source`: 0 live, 1 scheduled, 2 the render thread's own.
    @_noLocks
    func popEvent(from source: Int) {
        switch source {
        case 0: events.pop()
        case 1: scheduled.pop()
        default: direct.pop()
        }
    }

    /// Whether `event` can take effect inside a segment without ending it there: a note-on that
    /// neither chokes nor steals (its voices start at their frame), or a note-off of a ringing
    /// or unmapped key (nothing audible changes).
    @_noLocks
    func appliesWithinSegment(_ event: EngineEvent) -> Bool {
        let kind = event.status & 0xF0
        guard kind == 0x80 || kind == 0x90 else { return false }
        let set = midi.channels[Int(event.status & 0x0F)].set
        let note = soundingNote(of: event), starts = table.candidateStarts + 129 * set
        if note < 0 { return true } // moved off the keyboard: nothing sounds or stops
        if kind == 0x80 || event.data2 & 0x7F == 0 { return !table.noteDamps[note] }
        // A key struck again that lets go of its ringing voice first (a SoundFont's) must do so
        // at its frame.
        if table.sets[set].restrikeReleases, midi.noteVelocities[128 * Int(event.status & 0x0F) + note] != 0 {
            return false
        }
        // (guard, not &&: the operator's autoclosure would retain self)
        let count = Int(starts[note + 1] - starts[note])
        guard count > 0, !table.noteChokes[128 * set + note], freeCount >= count else { return false }
        return soundingCount + count <= configuration.polyphony
    }

    /// Applies `event`; a note-on's voice starts `delay` frames into the next segment.
    @_noLocks
    func apply(_ event: EngineEvent, delay: Int) {
        let channel = Int(event.status & 0x0F)
        let note = Int(event.data1 & 0x7F), value = Int(event.data2 & 0x7F)
        switch event.status & 0xF0 {
        case 0x90 where value > 0:
            let sounding = soundingNote(of: event)
            if event.transposable { midi.keyShifts[128 * channel + note] = Int8(truncatingIfNeeded: sounding - note) }
            if sounding < 0 {
                ignoredNotes.relaxedAdd(1)
            } else {
                noteOn(channel: channel, note: sounding, velocity: value, delay: delay)
            }
        case 0x80, 0x90:
            let sounding = soundingNote(of: event)
            if sounding >= 0 { noteOff(channel: channel, note: sounding) }
        case 0xB0: controlChange(channel: channel, controller: note, value: value)
        case 0xE0: bend(channel: channel, value: value << 7 | note)
        case 0xD0: channelPressure(channel: channel, value: note)
        case 0xA0:
            // A MIDI input's key as it sounds: moved as its note-on was.
            let key = event.transposable ? note + Int(midi.keyShifts[128 * channel + note]) : note
            if key >= 0, key < 128 { keyPressure(channel: channel, note: key, value: value) }
        case 0xC0: programChange(channel: channel, program: note)
        case 0xF0 where event.status == 0xF4: // Engine.roomStatus: 12 bits of set, 4 of room
            setRoom(set: Int(event.data2 >> 4) << 8 | Int(event.data1), room: Int(event.data2 & 15))
        case 0xF0 where event.status == 0xF5: chooseSet(channel: note & 15, set: event.chosenSet)
        default: break
        }
    }

    /// The note a note-on or note-off `event` plays: its key, moved by the transposition when it
    /// comes from a MIDI input (`EngineEvent.transposable`), except a key in the keyswitch range
    /// of the channel's set; a note-off moves by what its key's note-on moved by (`keyShifts`).
    /// -1 when that is off the keyboard (beyond 0...127), or when a key that is no keyswitch
    /// is moved into the keyswitch range (it must not switch): nothing sounds. Thread: render.
    /// Real-time safe.
    @_noLocks
    func soundingNote(of event: EngineEvent) -> Int {
        let note = Int(event.data1 & 0x7F)
        guard event.transposable else { return note }
        let channel = Int(event.status & 0x0F)
        let shifted: Int
        if event.status & 0xF0 == 0x90, event.data2 & 0x7F != 0 {
            let set = midi.channels[channel].set
            // (locals: an operator's autoclosure over `sets` would retain self)
            let low = table.sets[set].keyswitchLow, high = table.sets[set].keyswitchHigh,
                transpose = configuration.transpose
            if note >= low && note <= high { return note }
            shifted = note + transpose
            if shifted >= low && shifted <= high { return -1 }
        } else {
            shifted = note + Int(midi.keyShifts[128 * channel + note])
        }
        return shifted >= 0 && shifted <= 127 ? shifted : -1
    }
}
