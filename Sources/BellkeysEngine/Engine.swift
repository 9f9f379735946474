import Synchronization

/// Settings fixed for the life of an `Engine`.
public struct EngineConfiguration: Sendable {
    /// Output frames per second.
    public var sampleRate: Int
    /// Voices that may sound at once before one is stolen. Default 128: 6-second bells struck
    /// 21 times a second before any is stolen, at under 0.2 % of one core (see README).
    public var polyphony: Int = 128
    /// The render loop works in blocks of at most this many frames.
    public var maxBlockFrames: Int = 64
    /// Frames over which volume, expression and master changes move (64 = 1.3 ms at 48 kHz).
    public var rampFrames: Int = 64
    /// Fade of a stolen or choked voice, and of all-sound-off, in seconds.
    public var fadeSeconds: Double = 0.005
    /// Events the MIDI side can queue ahead of the render thread.
    public var eventCapacity: Int = 4096
    /// Events that can be scheduled ahead of time (phrase loop, demo tune); see `schedule`.
    public var scheduledCapacity: Int = 1024
    /// Peak limiter threshold, linear (0.891 = -1 dBFS).
    public var limiterThreshold: Float = 0.891
    /// Time for the limiter's gain to recover from full reduction, in seconds.
    public var limiterReleaseSeconds: Double = 0.25

    public init(sampleRate: Int, polyphony: Int = 128) {
        self.sampleRate = sampleRate
        self.polyphony = polyphony
    }
}

/// One mapped key in the form the render thread reads.
struct KeySlot {
    var frames: UnsafePointer<Int16>
    var frameCount: Int
    /// Key gain times the sample's storage scale.
    var gain: Float
    var damp: Bool
    var releaseFrames: Int
    var chokeGroup: Int
}

/// Where a voice is in its life.
enum VoicePhase: UInt8 {
    /// At its strike gain; counts toward polyphony.
    case sounding
    /// Fading after note-off on a damped key; counts toward polyphony, stolen first.
    case releasing
    /// Fast fade after being stolen, choked or silenced; no longer counts toward polyphony.
    case fading
}

/// One playing bell. Plain values only: no references, so copying one never retains.
struct Voice {
    var frames: UnsafePointer<Int16>
    var frameCount: Int
    var position = 0
    var gain: Ramp
    var serial: UInt64
    var releaseFrames: Int
    var chokeGroup: Int
    var channel: UInt8
    var note: UInt8
    var phase = VoicePhase.sounding
    var keyDown = true
    var damp: Bool
    var sustained = false
    /// Frames of the current segment before the voice starts.
    var delay = 0
}

/// Per MIDI channel: controller state and the gain ramp of the channel's bus.
struct ChannelState {
    var volume = 100          // CC7, General MIDI default
    var expression = 127      // CC11
    var sustain = false       // CC64
    var bus = Ramp(0)
    /// Voices on this channel's bus; with none, a gain change applies at once.
    var voiceCount = 0
}

/// The polyphonic bell mixer.
///
/// Voices are preallocated; `render` mixes them into mono `Float` frames, applying queued
/// events at their exact frames. Gain is staged as: sample × key gain × velocity curve (per
/// voice, constant while sounding) → channel bus × CC7 × CC11 × master (ramped over
/// `rampFrames`) → a zero-lookahead peak limiter at `limiterThreshold`, which only acts when
/// the sum of voices would pass it.
///
/// Threads: `render` and everything it calls run on the render thread only. `enqueue` belongs
/// to one producer thread. `setMasterVolume` and the counters may be used from any thread.
public final class Engine: @unchecked Sendable {
    public let configuration: EngineConfiguration
    /// Events to be applied by `render`; see `enqueue`.
    public let events: EventQueue
    /// Events planned ahead of time, in frame order; see `schedule`.
    public let scheduled: EventQueue
    /// The last `cancelScheduled`: `scheduled.pushedCount` then, times 32, plus the channel
    /// (16: all). The render thread skips that channel's scheduled events pushed before it.
    private let scheduledCancellation = Atomic<Int>(0)
    /// Keeps the sample memory that `keys` and voices point into alive.
    public let bank: SampleBank

    // Counters, written by the render thread (and `enqueue`), read anywhere.
    /// Events dropped because the queue was full.
    public let droppedEvents = Atomic<Int>(0)
    /// Events applied after their frame had passed (live input arriving late).
    public let lateEvents = Atomic<Int>(0)
    /// Voices stolen because polyphony was reached (each faded over `fadeSeconds`).
    public let stolenVoices = Atomic<Int>(0)
    /// Fading voices cut at once because every slot was busy (should stay 0).
    public let cutVoices = Atomic<Int>(0)
    /// Note-ons for notes that the map does not play.
    public let ignoredNotes = Atomic<Int>(0)
    /// Frames in which the limiter reduced the gain.
    public let limitedFrames = Atomic<Int>(0)
    /// Output samples beyond ±1.0 (should stay 0: the limiter prevents it).
    public let clippedSamples = Atomic<Int>(0)
    /// Voices sounding after the last render call, and the most at once so far.
    public let voiceCount = Atomic<Int>(0)
    public let peakVoiceCount = Atomic<Int>(0)
    /// Notes with a voice sounding after the last render call, one bit per MIDI note
    /// (0...63 in `soundingNotesLow`, 64...127 in `soundingNotesHigh`), whatever played them.
    public let soundingNotesLow = Atomic<UInt64>(0)
    public let soundingNotesHigh = Atomic<UInt64>(0)
    private let masterGainBits: Atomic<UInt32>

    // Render-thread state. Allocated in init, never resized.
    private let keys: UnsafeMutablePointer<KeySlot>
    private let noteToKey: UnsafeMutablePointer<Int32>
    private let velocityGains: UnsafeMutablePointer<Float>
    private let controllerGains: UnsafeMutablePointer<Float>
    private let voices: UnsafeMutablePointer<Voice>
    /// What idle voice slots point at.
    private let silence: UnsafeMutablePointer<Int16>
    private let active: UnsafeMutablePointer<Int32>
    private var activeCount = 0
    /// Active voices per MIDI note, and the notes with any (kept as voices start and end).
    private let noteVoiceCounts: UnsafeMutablePointer<Int32>
    private var soundingLow: UInt64 = 0, soundingHigh: UInt64 = 0
    private let free: UnsafeMutablePointer<Int32>
    private var freeCount: Int
    private var soundingCount = 0
    private var nextSerial: UInt64 = 0
    private let channels: UnsafeMutablePointer<ChannelState>
    private let buses: UnsafeMutablePointer<Float>
    private var masterGain: Float
    private var limiterGain: Float = 1
    private let limiterRecovery: Float
    private let fadeFrames: Int
    /// How many voices ahead of the one mixing the sample data is prefetched.
    private let prefetchDistance = 8
    /// Output frame that the next `render` call starts at.
    public private(set) var currentFrame: Int64 = 0

    /// Thread: control, before rendering starts.
    /// - Precondition: every key's `sampleIndex` is valid in `bank`.
    public init(bank: SampleBank, instrument: Instrument, configuration: EngineConfiguration) {
        precondition(configuration.polyphony > 0 && configuration.maxBlockFrames > 0)
        self.configuration = configuration
        self.bank = bank
        events = EventQueue(capacity: configuration.eventCapacity)
        scheduled = EventQueue(capacity: configuration.scheduledCapacity)
        let rate = Double(configuration.sampleRate)

        keys = .allocate(capacity: max(instrument.keys.count, 1))
        for (i, key) in instrument.keys.enumerated() {
            precondition(key.sampleIndex >= 0 && key.sampleIndex < bank.count)
            let damp: Bool, release: Double
            switch key.noteOff {
            case .ring: (damp, release) = (false, 0)
            case .damp(let seconds): (damp, release) = (true, seconds)
            }
            (keys + i).initialize(to: KeySlot(
                frames: bank.frames(of: key.sampleIndex),
                frameCount: bank.buffers[key.sampleIndex].count,
                gain: key.gain * bank.scales[key.sampleIndex],
                damp: damp,
                releaseFrames: max(1, Int((release * rate).rounded())),
                chokeGroup: key.chokeGroup))
        }
        noteToKey = .allocate(capacity: 128)
        noteVoiceCounts = .allocate(capacity: 128)
        noteVoiceCounts.initialize(repeating: 0, count: 128)
        for (note, index) in instrument.keyIndexForEveryNote().enumerated() {
            noteToKey[note] = Int32(index ?? -1)
        }
        velocityGains = .allocate(capacity: 128)
        controllerGains = .allocate(capacity: 128)
        for v in 0..<128 {
            velocityGains[v] = instrument.velocityCurve.gain(velocity: v)
            controllerGains[v] = VelocityCurve.square.gain(velocity: v)
        }

        // Twice the polyphony: a stolen voice keeps its slot while it fades out.
        let slotCount = configuration.polyphony * 2
        silence = .allocate(capacity: 1)
        silence.initialize(to: 0)
        let idle = Voice(frames: UnsafePointer(silence), frameCount: 0,
                         gain: Ramp(0), serial: 0, releaseFrames: 1, chokeGroup: 0, channel: 0,
                         note: 0, damp: false)
        voices = .allocate(capacity: slotCount)
        voices.initialize(repeating: idle, count: slotCount)
        active = .allocate(capacity: slotCount)
        active.initialize(repeating: 0, count: slotCount)
        free = .allocate(capacity: slotCount)
        for i in 0..<slotCount { free[i] = Int32(slotCount - 1 - i) }
        freeCount = slotCount

        let master = linearGain(decibels: instrument.masterVolumeDecibels)
        masterGain = master
        masterGainBits = Atomic(master.bitPattern)
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: ChannelState(), count: 16)
        buses = .allocate(capacity: 16 * configuration.maxBlockFrames)
        buses.initialize(repeating: 0, count: 16 * configuration.maxBlockFrames)
        limiterRecovery = Float(1 / max(configuration.limiterReleaseSeconds * rate, 1))
        fadeFrames = max(1, Int((configuration.fadeSeconds * rate).rounded()))
        for ch in 0..<16 { channels[ch].bus = Ramp(busTarget(channel: ch)) }
    }

    deinit {
        keys.deallocate()
        silence.deallocate()
        noteToKey.deallocate()
        noteVoiceCounts.deallocate()
        velocityGains.deallocate()
        controllerGains.deallocate()
        voices.deallocate()
        active.deallocate()
        free.deallocate()
        channels.deallocate()
        buses.deallocate()
    }

    // MARK: Control side

    /// Queues `event` for `render`; counts and drops it when the queue is full.
    /// Thread: the single producer (MIDI thread, or the renderer's own thread offline).
    @_noLocks
    @discardableResult
    public func enqueue(_ event: EngineEvent) -> Bool {
        if events.push(event) { return true }
        droppedEvents.wrappingAdd(1, ordering: .relaxed)
        return false
    }

    /// Queues `event` ahead of time: unlike `enqueue`'s live events, which wait for no one,
    /// these may lie seconds ahead, and `render` merges both queues by frame. Events must be
    /// scheduled in frame order. Returns false when the queue is full (nothing is counted:
    /// the caller schedules again later). Thread: the single producer.
    @_noLocks
    public func schedule(_ event: EngineEvent) -> Bool {
        scheduled.push(event)
    }

    /// Drops every event on `channel` (0...15; nil: every channel) scheduled so far that has
    /// not yet taken effect. Events scheduled after this call are kept, and so are other
    /// channels' events. Only the latest call counts. Thread: the single producer.
    public func cancelScheduled(channel: Int?) {
        let code = channel.map { $0 & 15 } ?? 16
        scheduledCancellation.store(scheduled.pushedCount * 32 + code, ordering: .releasing)
    }

    /// Whether `note` (0...127) sounded at the end of the last render call. Thread: any.
    public func isSounding(note: Int) -> Bool {
        let bits = note < 64 ? soundingNotesLow.load(ordering: .relaxed) : soundingNotesHigh.load(ordering: .relaxed)
        return bits & (1 << UInt64(note & 63)) != 0
    }

    /// Sets the master volume; the render thread ramps to it. Thread: any.
    public func setMasterVolume(decibels: Double) {
        masterGainBits.store(linearGain(decibels: decibels).bitPattern, ordering: .relaxed)
    }

    /// Voices sounding or fading right now. Thread: render (or after rendering stopped).
    public var activeVoiceCount: Int { activeCount }

    /// Whether no voice sounds and no event waits. Thread: render. Real-time safe.
    @_noLocks
    public func isSilent() -> Bool {
        if activeCount != 0 { return false }
        if let _ = events.peek() { return false }
        if let _ = scheduled.peek() { return false }
        return true
    }

    /// Sets the frame that the next `render` starts at, so a new engine joins a running output
    /// (live map reload). Thread: render, before this engine's first `render`.
    @_noLocks
    public func start(atFrame frame: Int64) {
        currentFrame = frame
    }

    // MARK: Render side

    /// Renders `frameCount` mono frames into `output`, applying every queued event whose frame
    /// falls inside them at exactly that frame. Thread: render. Real-time safe.
    @_noLocks
    public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int) {
        let masterBits = masterGainBits.load(ordering: .relaxed)
        if masterBits != masterGain.bitPattern {
            masterGain = Float(bitPattern: masterBits)
            for ch in 0..<16 { updateBus(channel: ch) }
        }
        let cancellation = scheduledCancellation.load(ordering: .acquiring)
        let cancelledBefore = cancellation >> 5, cancelledChannel = UInt8(cancellation & 31)
        var done = 0
        while done < frameCount {
            var end = min(frameCount, done + configuration.maxBlockFrames)
            while true {
                // The earlier of the two queues' heads; live events first on a tie.
                var fromScheduled = false
                var next = events.peek()
                var planned = scheduled.peek()
                while let skipped = planned, cancelledChannel == 16 || skipped.status & 0x0F == cancelledChannel,
                      scheduled.headIndex < cancelledBefore {
                    scheduled.pop()
                    planned = scheduled.peek()
                }
                if let planned {
                    if let live = next {
                        if planned.frame < live.frame { next = planned; fromScheduled = true }
                    } else {
                        next = planned
                        fromScheduled = true
                    }
                }
                guard let event = next else { break }
                let offset = event.frame - currentFrame
                if offset > 0 {
                    guard offset < Int64(end - done) else { break }
                    // See appliesWithinSegment; anything else ends the segment at its frame.
                    if appliesWithinSegment(event) {
                        apply(event, delay: Int(offset))
                        if fromScheduled { scheduled.pop() } else { events.pop() }
                        continue
                    }
                    end = done + Int(offset)
                    break
                }
                if offset < 0 { lateEvents.wrappingAdd(1, ordering: .relaxed) }
                apply(event, delay: 0)
                if fromScheduled { scheduled.pop() } else { events.pop() }
            }
            renderSegment(into: output + done, frameCount: end - done)
            currentFrame += Int64(end - done)
            done = end
        }
        voiceCount.store(activeCount, ordering: .relaxed)
        soundingNotesLow.store(soundingLow, ordering: .relaxed)
        soundingNotesHigh.store(soundingHigh, ordering: .relaxed)
        if activeCount > peakVoiceCount.load(ordering: .relaxed) {
            peakVoiceCount.store(activeCount, ordering: .relaxed)
        }
    }

    @_noLocks
    private func renderSegment(into output: UnsafeMutablePointer<Float>, frameCount n: Int) {
        let stride = configuration.maxBlockFrames
        var used: UInt16 = 0
        // Voices at a constant gain with a whole segment of sample left are mixed four at a
        // time, in one pass over their bus; the others (ramping or ending) one by one.
        var batch = VoiceBatch()
        var i = activeCount - 1
        while i >= 0 {
            // With hundreds of voices, each reading a short run of a different sample, the
            // hardware prefetcher cannot follow them and every voice would start with cache
            // misses (3x slower at 64-frame blocks; see README). Ask for the data of the voice
            // `prefetchDistance` places ahead while this one mixes.
            if i >= prefetchDistance {
                let ahead = Int(active[i - prefetchDistance])
                prefetch(voices[ahead].frames + voices[ahead].position, byteCount: n * 2 + 64)
            }
            let slot = Int(active[i])
            let channel = Int(voices[slot].channel)
            let bus = buses + channel * stride
            if used & (1 << channel) == 0 {
                bus.update(repeating: 0, count: n)
                used |= 1 << channel
            }
            let delay = voices[slot].delay
            if delay > 0 {
                // Started inside this segment: mix from its frame on.
                voices[slot].delay = 0
                if delay >= n {
                    voices[slot].delay = delay - n
                } else if mixVoice(&voices[slot], into: bus + delay, frameCount: n - delay) {
                    retire(activeIndex: i)
                }
            } else if voices[slot].gain.framesLeft == 0, voices[slot].position + n <= voices[slot].frameCount {
                if batch.count > 0, batch.bus != bus { batch.flush(frameCount: n) }
                batch.add(voices[slot].frames + voices[slot].position, gain: voices[slot].gain.value, bus: bus)
                if batch.count == 4 { batch.flush(frameCount: n) }
                voices[slot].position += n
                if voices[slot].position >= voices[slot].frameCount { retire(activeIndex: i) }
            } else if mixVoice(&voices[slot], into: bus, frameCount: n) {
                retire(activeIndex: i)
            }
            i -= 1
        }
        batch.flush(frameCount: n)

        output.update(repeating: 0, count: n)
        for channel in 0..<16 {
            if used & (1 << channel) == 0 {
                channels[channel].bus.advance(by: Int.max)   // silent bus: jump, nothing to click
                continue
            }
            let bus = buses + channel * stride
            var ramp = channels[channel].bus
            var k = 0
            if ramp.framesLeft > 0 {
                let m = min(n, ramp.framesLeft)
                for j in 0..<Int32(m) { output[Int(j)] += bus[Int(j)] * (ramp.value + ramp.step * Float(j)) }
                ramp.advance(by: m)
                k = m
            }
            let g = ramp.value
            for j in k..<n { output[j] += bus[j] * g }
            channels[channel].bus = ramp
        }
        limit(output, frameCount: n)
    }

    /// Peak limiter: gain drops at once to keep |x| at the threshold, then recovers linearly.
    /// Exactly transparent (gain 1.0) while nothing passes the threshold.
    @_noLocks
    private func limit(_ output: UnsafeMutablePointer<Float>, frameCount n: Int) {
        let threshold = configuration.limiterThreshold
        var g = limiterGain
        var limited = 0, clipped = 0
        for j in 0..<n {
            let x = output[j]
            let a = abs(x)
            let y: Float
            if a * g > threshold {
                g = threshold / a
                y = x < 0 ? -threshold : threshold     // x * g could round one ulp past it
            } else {
                y = x * g
            }
            output[j] = y
            if g < 1 {
                limited += 1
                g = min(1, g + limiterRecovery)
            }
            if !(abs(y) <= 1) { clipped += 1 }
        }
        limiterGain = g
        if limited > 0 { limitedFrames.wrappingAdd(limited, ordering: .relaxed) }
        if clipped > 0 { clippedSamples.wrappingAdd(clipped, ordering: .relaxed) }
    }

    // MARK: Events

    /// Whether `event` can take effect inside a segment without ending it there: a note-on that
    /// neither chokes nor steals (its voice starts at its frame), or a note-off of a ringing or
    /// unmapped key (nothing audible changes).
    @_noLocks
    private func appliesWithinSegment(_ event: EngineEvent) -> Bool {
        let kind = event.status & 0xF0
        guard kind == 0x80 || kind == 0x90 else { return false }
        let keyIndex = Int(noteToKey[Int(event.data1 & 0x7F)])
        if kind == 0x80 || event.data2 & 0x7F == 0 {
            if keyIndex < 0 { return true }
            return !keys[keyIndex].damp
        }
        // (guard, not &&: the operator's autoclosure would retain self)
        guard keyIndex >= 0, keys[keyIndex].chokeGroup == 0, freeCount > 0 else { return false }
        return soundingCount < configuration.polyphony
    }

    /// Applies `event`; a note-on's voice starts `delay` frames into the next segment.
    @_noLocks
    private func apply(_ event: EngineEvent, delay: Int) {
        let channel = Int(event.status & 0x0F)
        let note = Int(event.data1 & 0x7F), value = Int(event.data2 & 0x7F)
        switch event.status & 0xF0 {
        case 0x90 where value > 0: noteOn(channel: channel, note: note, velocity: value, delay: delay)
        case 0x80, 0x90: noteOff(channel: channel, note: note)
        case 0xB0: controlChange(channel: channel, controller: note, value: value)
        default: break
        }
    }

    @_noLocks
    private func noteOn(channel: Int, note: Int, velocity: Int, delay: Int) {
        let keyIndex = Int(noteToKey[note])
        if keyIndex < 0 {
            ignoredNotes.wrappingAdd(1, ordering: .relaxed)
            return
        }
        let key = keys[keyIndex]
        if key.chokeGroup != 0 {
            for i in 0..<activeCount where voices[Int(active[i])].chokeGroup == key.chokeGroup {
                fade(slot: Int(active[i]))
            }
        }
        if soundingCount >= configuration.polyphony { stealVoice() }
        if freeCount == 0 { cutQuietestFadingVoice() }
        freeCount -= 1
        let slot = Int(free[freeCount])
        voices[slot] = Voice(frames: key.frames, frameCount: key.frameCount,
                             gain: Ramp(key.gain * velocityGains[velocity]), serial: nextSerial,
                             releaseFrames: key.releaseFrames, chokeGroup: key.chokeGroup,
                             channel: UInt8(channel), note: UInt8(note), damp: key.damp)
        voices[slot].delay = delay
        nextSerial &+= 1
        active[activeCount] = Int32(slot)
        activeCount += 1
        soundingCount += 1
        channels[channel].voiceCount += 1
        noteVoiceCounts[note] += 1
        if note < 64 { soundingLow |= 1 << UInt64(note) } else { soundingHigh |= 1 << UInt64(note & 63) }
    }

    @_noLocks
    private func noteOff(channel: Int, note: Int) {
        let sustain = channels[channel].sustain
        for i in 0..<activeCount {
            let slot = Int(active[i])
            guard voices[slot].channel == channel, voices[slot].note == note,
                  voices[slot].keyDown else { continue }
            voices[slot].keyDown = false
            guard voices[slot].damp else { continue }
            if sustain { voices[slot].sustained = true } else { release(slot: slot) }
        }
    }

    @_noLocks
    private func controlChange(channel: Int, controller: Int, value: Int) {
        // Literal cases: matching named constants or a range calls out of the module.
        switch controller {
        case 7:  // channel volume
            channels[channel].volume = value
            updateBus(channel: channel)
        case 11:  // expression
            channels[channel].expression = value
            updateBus(channel: channel)
        case 64:  // sustain pedal
            let down = value >= 64
            channels[channel].sustain = down
            if !down { releaseSustained(channel: channel) }
        case 120:  // all sound off
            for i in 0..<activeCount where voices[Int(active[i])].channel == channel {
                fade(slot: Int(active[i]))
            }
        case 121:  // reset all controllers
            channels[channel].expression = 127
            channels[channel].sustain = false
            releaseSustained(channel: channel)
            updateBus(channel: channel)
        case 123, 124, 125, 126, 127:  // all notes off, and the mode messages
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
    private func releaseSustained(channel: Int) {
        for i in 0..<activeCount {
            let slot = Int(active[i])
            guard voices[slot].channel == channel, voices[slot].sustained else { continue }
            voices[slot].sustained = false
            release(slot: slot)
        }
    }

    @_noLocks
    private func busTarget(channel: Int) -> Float {
        controllerGains[channels[channel].volume] * controllerGains[channels[channel].expression]
            * masterGain
    }

    @_noLocks
    private func updateBus(channel: Int) {
        let frames = channels[channel].voiceCount == 0 ? 0 : configuration.rampFrames
        channels[channel].bus.move(to: busTarget(channel: channel), frames: frames)
    }

    // MARK: Voice life

    /// Damped note-off: fade over the key's release time.
    @_noLocks
    private func release(slot: Int) {
        guard voices[slot].phase == .sounding else { return }
        voices[slot].phase = .releasing
        voices[slot].gain.move(to: 0, frames: voices[slot].releaseFrames)
    }

    /// Stolen, choked or silenced: fade over `fadeSeconds` (or sooner if already nearly silent).
    @_noLocks
    private func fade(slot: Int) {
        if voices[slot].phase == .fading { return }
        voices[slot].phase = .fading
        soundingCount -= 1
        let ramp = voices[slot].gain, frames = fadeFrames
        if ramp.target == 0, ramp.framesLeft > 0, ramp.framesLeft <= frames { return }
        voices[slot].gain.move(to: 0, frames: frames)
    }

    /// Polyphony is full: fade the voice that will be missed least. Releasing voices go first,
    /// then voices whose key is up, then any; the oldest within each.
    @_noLocks
    private func stealVoice() {
        var best = -1
        var bestRank = Int.max, bestSerial = UInt64.max
        for i in 0..<activeCount {
            let slot = Int(active[i])
            let v = voices[slot]
            if v.phase == .fading { continue }
            let rank = v.phase == .releasing ? 0 : (v.keyDown || v.sustained ? 2 : 1)
            if rank < bestRank || (rank == bestRank && v.serial < bestSerial) {
                best = slot
                bestRank = rank
                bestSerial = v.serial
            }
        }
        if best >= 0 {
            fade(slot: best)
            stolenVoices.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Every slot is taken by fading voices: end the quietest now so the new note can start.
    @_noLocks
    private func cutQuietestFadingVoice() {
        var best = -1
        var bestGain = Float.infinity
        for i in 0..<activeCount {
            let v = voices[Int(active[i])]
            if v.phase == .fading && abs(v.gain.value) < bestGain {
                best = i
                bestGain = abs(v.gain.value)
            }
        }
        if best < 0 { best = 0 }
        retire(activeIndex: best)
        cutVoices.wrappingAdd(1, ordering: .relaxed)
    }

    @_noLocks
    private func retire(activeIndex i: Int) {
        let slot = active[i]
        if voices[Int(slot)].phase != .fading { soundingCount -= 1 }
        channels[Int(voices[Int(slot)].channel)].voiceCount -= 1
        let note = Int(voices[Int(slot)].note)
        noteVoiceCounts[note] -= 1
        if noteVoiceCounts[note] == 0 {
            if note < 64 { soundingLow &= ~(1 << UInt64(note)) } else { soundingHigh &= ~(1 << UInt64(note & 63)) }
        }
        activeCount -= 1
        active[i] = active[activeCount]
        free[freeCount] = slot
        freeCount += 1
    }
}

/// (File scope: a static method would touch the class metadata on the render thread.)
/// Mixes up to `n` frames of `voice` into `bus`; returns true when the voice has ended.
@_noLocks
@inline(__always)
private func mixVoice(_ voice: inout Voice, into bus: UnsafeMutablePointer<Float>,
                      frameCount n: Int) -> Bool {
    let available = min(n, voice.frameCount - voice.position)
    let source = voice.frames + voice.position
    var k = 0
    if voice.gain.framesLeft > 0 {
        let m = min(available, voice.gain.framesLeft)
        let g0 = voice.gain.value, step = voice.gain.step
        // Int32 index: converts to Float in SIMD registers; an Int (64-bit) one goes scalar.
        for j in 0..<Int32(m) { bus[Int(j)] += Float(source[Int(j)]) * (g0 + step * Float(j)) }
        voice.gain.advance(by: m)
        k = m
        if voice.phase != .sounding, voice.gain.framesLeft == 0, voice.gain.value == 0 {
            return true
        }
    }
    let g = voice.gain.value
    for j in k..<available { bus[j] += Float(source[j]) * g }
    voice.position += available
    return voice.position >= voice.frameCount
}

/// Up to four voices waiting to be mixed into the same bus at constant gains.
struct VoiceBatch {
    var count = 0
    var bus = UnsafeMutablePointer<Float>(bitPattern: 16)!
    var s0 = UnsafePointer<Int16>(bitPattern: 16)!, s1 = UnsafePointer<Int16>(bitPattern: 16)!
    var s2 = UnsafePointer<Int16>(bitPattern: 16)!, s3 = UnsafePointer<Int16>(bitPattern: 16)!
    var g0: Float = 0, g1: Float = 0, g2: Float = 0, g3: Float = 0

    @_noLocks
    @inline(__always)
    mutating func add(_ source: UnsafePointer<Int16>, gain: Float, bus: UnsafeMutablePointer<Float>) {
        self.bus = bus
        switch count {
        case 0: (s0, g0) = (source, gain)
        case 1: (s1, g1) = (source, gain)
        case 2: (s2, g2) = (source, gain)
        default: (s3, g3) = (source, gain)
        }
        count += 1
    }

    /// Mixes the waiting voices over `n` frames and empties the batch.
    @_noLocks
    mutating func flush(frameCount n: Int) {
        let (b, a0, a1, a2, a3, h0, h1, h2, h3) = (bus, s0, s1, s2, s3, g0, g1, g2, g3)
        switch count {
        case 4:
            for j in 0..<n {
                b[j] += (Float(a0[j]) * h0 + Float(a1[j]) * h1) + (Float(a2[j]) * h2 + Float(a3[j]) * h3)
            }
        case 3:
            for j in 0..<n { b[j] += (Float(a0[j]) * h0 + Float(a1[j]) * h1) + Float(a2[j]) * h2 }
        case 2:
            for j in 0..<n { b[j] += Float(a0[j]) * h0 + Float(a1[j]) * h1 }
        case 1:
            for j in 0..<n { b[j] += Float(a0[j]) * h0 }
        default:
            break
        }
        count = 0
    }
}
