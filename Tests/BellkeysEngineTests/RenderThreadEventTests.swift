import AllocationCounter
import BellkeysEngine
import BellkeysModel
import Synchronization
import Testing

/// Events the render thread reads itself (JACK MIDI, with frame offsets in the cycle): played
/// at their frame with no latency added, through the same engine as queued events.
@Suite struct RenderThreadEvents {
    /// A JACK cycle: begin, play the cycle's events at their offsets, render into one buffer
    /// per channel. Returns the channels.
    func cycle(
        _ mixer: LiveMixer, frameCount: Int, events: [(offset: Int, status: UInt8, data1: UInt8, data2: UInt8)] = [],
        nanoseconds: UInt64 = 1
    ) -> [[Float]] {
        let first = mixer.beginPeriod(frameCount: frameCount, nanoseconds: nanoseconds)
        for e in events {
            var bytes: [UInt8] = [e.status, e.data1, e.data2]
            let event = bytes.withUnsafeMutableBufferPointer {
                EngineEvent(midi: $0.baseAddress!, count: 3, frame: first + Int64(e.offset))
            }
            mixer.playNow(event!)
        }
        let buffers = (0..<mixer.channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frameCount) }
        defer { buffers.forEach { $0.deallocate() } }
        buffers.withUnsafeBufferPointer { mixer.render(frameCount: frameCount, into: $0.baseAddress!, tap: nil) }
        return buffers.map { Array(UnsafeBufferPointer(start: $0, count: frameCount)) }
    }

    @Test func anEventStartsItsBellAtItsOffsetInTheCycle() {
        let (samples, keys) = impulseKeys()
        let mixer = LiveMixer(
            engine: makeEngine(samples: samples, keys: keys), channels: 2, format: .f32, maximumPeriodFrames: 64)
        _ = cycle(mixer, frameCount: 64)
        // Offsets 0, 1, 31, 63 of the second cycle; note 60's impulse is its first sample.
        for offset in [0, 1, 31, 63] {
            let out = cycle(mixer, frameCount: 64, events: [(offset, 0x90, 60, 127)])
            let onsets = out[0].indices.filter { out[0][$0] != 0 }
            #expect(onsets == [offset], "offset \(offset)")
            #expect(out[0] == out[1])
        }
    }

    @Test func aCycleLongerThanTheMixersPeriodIsRenderedInPartsWithTheSameFrames() {
        let (samples, keys) = impulseKeys()
        let mixer = LiveMixer(
            engine: makeEngine(samples: samples, keys: keys), channels: 1, format: .f32, maximumPeriodFrames: 64)
        // A server switched to 256 frames: four parts of 64, each note at its frame.
        let out = cycle(
            mixer, frameCount: 256, events: [(5, 0x90, 60, 127), (64, 0x90, 61, 127), (200, 0x90, 72, 127)])[0]
        #expect(out.indices.filter { out[$0] != 0 } == [5, 64 + 1, 200 + 12])
        #expect(mixer.frame == 256)
        #expect(mixer.periodFrames.load(ordering: .relaxed) == 256)
    }

    @Test func velocityAndTheMixersChannelsComeOutAsQueuedEventsDo() {
        let engine = makeEngine(
            samples: [constant(0.5, 100)], keys: [KeySettings(note: 60, sampleIndex: 0, leftGain: 1, rightGain: 0.5)])
        let mixer = LiveMixer(engine: engine, channels: 3, format: .f32, maximumPeriodFrames: 16)
        let out = cycle(mixer, frameCount: 16, events: [(4, 0x90, 60, 64)])
        // Square law: (64/127)² × 0.5; right at half; the third channel the average.
        let g = Float(64.0 / 127.0) * Float(64.0 / 127.0) * 0.5
        #expect(out[0][3] == 0 && out[0][4] == g)
        #expect(out[1][4] == g * 0.5)
        #expect(out[2][4] == (g + g * 0.5) / 2)
    }

    @Test func theControlThreadIsToldOfEveryEventPlayed() {
        let (samples, keys) = impulseKeys()
        let mixer = LiveMixer(
            engine: makeEngine(samples: samples, keys: keys), channels: 1, format: .f32, maximumPeriodFrames: 64)
        _ = cycle(mixer, frameCount: 64, events: [(3, 0x90, 60, 100), (9, 0xB0, 64, 127)])
        var told: [EngineEvent] = []
        while let event = mixer.played.peek() {
            told.append(event)
            mixer.played.pop()
        }
        #expect(
            told == [
                EngineEvent.noteOn(frame: 3, note: 60, velocity: 100).fromMIDIInput,
                EngineEvent.control(frame: 9, controller: 64, value: 127).fromMIDIInput,
            ])
    }

    @Test func theOldMapHearsEverythingButStrikesWhileItRingsOut() {
        let old = makeEngine(
            samples: [constant(0.25, 1_000)], keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)])
        let new = makeEngine(
            samples: [constant(0.5, 1_000)], keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)])
        let mixer = LiveMixer(engine: old, channels: 1, format: .f32, maximumPeriodFrames: 64)
        _ = cycle(mixer, frameCount: 64, events: [(0, 0x90, 60, 127)])
        #expect(mixer.install(new))
        // The new map strikes at 10; a note-off at 20 damps both maps' bells over 1 ms (48 frames).
        let out = cycle(mixer, frameCount: 64, events: [(10, 0x90, 60, 127), (20, 0x80, 60, 0)])[0]
        #expect(out[0] == 0.25 && out[10] == 0.75 && out[19] == 0.75)
        #expect(out[21] < 0.75)
        _ = cycle(mixer, frameCount: 64)
        let later = cycle(mixer, frameCount: 64)[0]
        #expect(later.allSatisfy { $0 == 0 })
    }

    @Test func onlyWholeChannelMessagesArePlayed() {
        func decode(_ bytes: [UInt8]) -> EngineEvent? {
            var bytes = bytes
            return bytes.withUnsafeMutableBufferPointer {
                EngineEvent(midi: $0.baseAddress!, count: $0.count, frame: 7)
            }
        }
        #expect(
            decode([0x93, 60, 100]) == EngineEvent(frame: 7, status: 0x93, data1: 60, data2: 100, transposable: true))
        #expect(decode([0x80, 60, 0]) == EngineEvent.noteOff(frame: 7, note: 60).fromMIDIInput)
        #expect(decode([0xB0, 7, 90]) == EngineEvent.control(frame: 7, controller: 7, value: 90).fromMIDIInput)
        #expect(decode([0xC0, 5, 0]) == nil) // program change
        #expect(decode([0xE0, 0, 64]) == EngineEvent.pitchBend(frame: 7, value: 8_192).fromMIDIInput)
        #expect(decode([0xE0, 0x7F, 0x7F]) == EngineEvent.pitchBend(frame: 7, value: 16_383).fromMIDIInput)
        #expect(decode([0xD0, 64, 0]) == nil) // channel pressure has one data byte
        #expect(decode([0xD2, 64]) == EngineEvent.channelPressure(frame: 7, channel: 2, value: 64).fromMIDIInput)
        #expect(
            decode([0xA1, 60, 30]) == EngineEvent.keyPressure(frame: 7, channel: 1, note: 60, value: 30).fromMIDIInput)
        #expect(decode([0xA1, 60]) == nil)
        #expect(decode([0xC0, 5]) == EngineEvent.programChange(frame: 7, program: 5).fromMIDIInput)
        #expect(decode([0x90, 60]) == nil) // cut short
        #expect(decode([0x90, 60, 200]) == nil) // a data byte with the top bit set
        #expect(decode([0xF0, 0x7E, 0x7F, 0xF7].prefix(3).map { $0 }) == nil) // SysEx
        #expect(decode([0x90, 60, 0])?.strikes == false)
        #expect(decode([0x90, 60, 1])?.strikes == true)
    }

    /// The engine mixes on a fixed grid of blocks, however its calls are cut (on that grid) and
    /// whichever queue brings the events: JACK-style 64-frame cycles with each event played by
    /// the render thread in its cycle equal one offline render of the same events queued ahead,
    /// bit for bit, through ramps (CC7, CC11, damping), the pedal and many voices at once.
    @Test func periodByPeriodEqualsOfflineBitForBit() {
        // Sawtooths of different periods: every key's samples differ.
        let samples: [[Float]] = (0..<13).map { k in
            (0..<20_000).map { (i: Int) -> Float in Float((i * (k + 3)) % 200 - 100) / 400 }
        }
        let keys = (0..<13).map {
            KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: $0 % 3 == 0 ? .ring : .damp(releaseSeconds: 0.01))
        }
        var events: [EngineEvent] = []
        for i in 0..<300 {
            let frame = Int64(i * 157 + (i * i) % 61)
            switch i % 7 {
            case 0: events.append(.control(frame: frame, controller: 7, value: 40 + i % 80))
            case 1: events.append(.control(frame: frame, controller: 11, value: 60 + i % 60))
            case 2: events.append(.control(frame: frame, controller: 64, value: i % 2 == 0 ? 127 : 0))
            case 3: events.append(.noteOff(frame: frame, note: 60 + (i * 5) % 13))
            default: events.append(.noteOn(frame: frame, note: 60 + (i * 7) % 13, velocity: 20 + i % 100))
            }
        }
        let total = 50_048
        let offline = makeEngine(samples: samples, keys: keys, polyphony: 32)
        for event in events { offline.enqueue(event) }
        var expected = [Float](repeating: 0, count: total)
        expected.withUnsafeMutableBufferPointer { buffer in
            var done = 0
            while done < total {
                let n = min(4_096, total - done)
                offline.render(into: buffer.baseAddress! + done, frameCount: n)
                done += n
            }
        }
        let live = makeEngine(samples: samples, keys: keys, polyphony: 32)
        let mixer = LiveMixer(engine: live, channels: 1, format: .f32, maximumPeriodFrames: 64)
        var got: [Float] = []
        var next = 0
        for _ in 0..<(total / 64) {
            let first = mixer.beginPeriod(frameCount: 64, nanoseconds: 1)
            while next < events.count, events[next].frame < first + 64 {
                mixer.playNow(events[next])
                next += 1
            }
            got += renderRest(mixer, frameCount: 64)
        }
        #expect(offline.peakVoiceCount.load(ordering: .relaxed) >= 8)
        #expect(got.count == expected.count)
        // (Counted, not compared whole: a failure prints two numbers, not 50,000.)
        let differing = got.indices.filter { $0 < expected.count && got[$0] != expected[$0] }
        #expect(differing.count == 0, "first at frame \(differing.first ?? -1)")
    }

    /// Renders the period begun into one channel and returns it.
    func renderRest(_ mixer: LiveMixer, frameCount: Int) -> [Float] {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frameCount)
        defer { buffer.deallocate() }
        var pointer = buffer
        withUnsafePointer(to: &pointer) { mixer.render(frameCount: frameCount, into: $0, tap: nil) }
        return Array(UnsafeBufferPointer(start: buffer, count: frameCount))
    }

    /// Thousands of JACK-style cycles of changing length, with events at offsets, a reload
    /// ringing out, and a recording tap: nothing allocates.
    @Test func aJACKCycleNeverAllocates() {
        let (samples, keys) = impulseKeys(ring: false)
        let mixer = LiveMixer(
            engine: makeEngine(samples: samples, keys: keys), channels: 2, format: .f32, maximumPeriodFrames: 64)
        let spare = makeEngine(samples: samples, keys: keys)
        let tap = AudioTap(frameCapacity: 4_096, frameByteCount: mixer.frameByteCount)
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 256) }
        defer { buffers.forEach { $0.deallocate() } }
        let channelBuffers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        defer { channelBuffers.deallocate() }
        channelBuffers.initialize(from: buffers, count: 2)
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 3)
        defer { bytes.deallocate() }
        let unmanagedTap = Unmanaged.passUnretained(tap)
        // The map reloaded (the control thread's part allocates, and is done first): the old
        // engine rings out alongside during the first cycles.
        #expect(mixer.install(spare))
        bellkeys_allocations_start()
        for c in 0..<5_000 {
            let frames = c < 2_500 ? 64 : 256
            let first = mixer.beginPeriod(frameCount: frames, nanoseconds: UInt64(c) * 1_333_333)
            bytes[0] = c % 3 == 0 ? 0x80 : 0x90
            bytes[1] = UInt8(60 + c % 13)
            bytes[2] = UInt8(1 + c % 127)
            if let event = EngineEvent(midi: bytes, count: 3, frame: first + Int64(c % frames)) { mixer.playNow(event) }
            mixer.render(frameCount: frames, into: channelBuffers, tap: unmanagedTap)
            while let _ = mixer.played.peek() { mixer.played.pop() }
        }
        let allocations = bellkeys_allocations_stop()
        #expect(allocations == 0)
    }
}

/// `--channel` and `--skip-drums`, the one rule every input applies (the JACK callback too).
@Suite struct ChannelFilterRule {
    @Test func everyChannelByDefault() {
        for status in UInt8(0x80)...0xEF { #expect(ChannelFilter.all.accepts(status: status)) }
    }

    @Test func oneChannelOnly() {
        let second = ChannelFilter(channel: 1)
        for status in UInt8(0x80)...0xEF { #expect(second.accepts(status: status) == (status & 0x0F == 1)) }
    }

    @Test func theDrumsLeftOut() {
        let noDrums = ChannelFilter(skipsDrums: true)
        for status in UInt8(0x80)...0xEF { #expect(noDrums.accepts(status: status) == (status & 0x0F != 9)) }
        #expect(!ChannelFilter(channel: 9, skipsDrums: true).accepts(status: 0x99))
    }

    @Test func applyKeepsTheOthersInOrder() {
        let events = [
            EngineEvent.noteOn(frame: 0, channel: 0, note: 60, velocity: 100),
            EngineEvent.noteOn(frame: 5, channel: 9, note: 38, velocity: 100),
            EngineEvent.control(frame: 7, channel: 9, controller: 7, value: 0),
            EngineEvent.noteOn(frame: 9, channel: 3, note: 64, velocity: 90),
        ]
        #expect(ChannelFilter(skipsDrums: true).apply(events) == [events[0], events[3]])
        #expect(ChannelFilter(channel: 3).apply(events) == [events[3]])
        #expect(ChannelFilter.all.apply(events) == events)
    }
}
