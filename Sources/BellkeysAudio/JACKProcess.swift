import BellkeysControl
import BellkeysEngine
import BellkeysModel
import BellkeysSystem
import CJack
import Glibc
import Synchronization

// The JACK driver's real-time side: the process callback and the notification callbacks.
extension JACKOutput {
    /// One JACK cycle of `frameCount` frames. Thread: JACK's process thread.
    ///
    /// This outer function makes the C calls, all of them JACK's real-time API (port buffers,
    /// the cycle's times, MIDI events; the compiler cannot see into C, so it is not marked),
    /// and hands plain values to the checked real-time functions `begin`, `play` and `finish`,
    /// as `RenderThread` keeps `snd_pcm_writei` outside the mixer.
    func process(frameCount: Int) {
        let began = monotonicNanoseconds()
        let frames = UInt32(frameCount)
        for channel in 0..<channelCount {
            channelBuffers[channel] = bk_jack_port_get_buffer(outputPorts[channel], frames)!.assumingMemoryBound(
                to: Float.self)
        }
        guard let mixer else {
            silence(frameCount: frameCount)
            return
        }
        var frameTime: UInt32 = 0, cycleMicroseconds: UInt64 = 0, nextMicroseconds: UInt64 = 0
        var periodMicroseconds: Float = 0
        let timed =
            bk_jack_get_cycle_times(client, &frameTime, &cycleMicroseconds, &nextMicroseconds, &periodMicroseconds) == 0
        if !timed { frameTime = bk_jack_last_frame_time(client) }
        // JACK's clock and ours read back to back, so the cycle's start maps without a gap.
        let jackNow = timed ? bk_jack_get_time() : 0
        let now = monotonicNanoseconds()
        let first = begin(
            frameCount: frameCount, frameTime: frameTime, began: now,
            sinceCycleStartMicroseconds: timed && jackNow >= cycleMicroseconds ? jackNow - cycleMicroseconds : 0,
            mixer: mixer)
        if let buffer = bk_jack_port_get_buffer(midiPort, frames) {
            var event = bk_jack_midi_event()
            let count = bk_jack_midi_get_event_count(buffer)
            var index: UInt32 = 0
            while index < count {
                if bk_jack_midi_event_get(&event, buffer, index) == 0, let bytes = event.buffer {
                    play(
                        bytes, count: event.size, offset: Int(event.time), first: first, frameCount: frameCount,
                        mixer: mixer)
                }
                index += 1
            }
        }
        finish(frameCount: frameCount, mixer: mixer)
        count(busy: monotonicNanoseconds() &- began)
    }

    /// Starts the cycle on the mixer: its first frame on the monotonic clock is the time the
    /// callback began less the time JACK says had passed since the cycle began (so a late
    /// wake-up does not move the line); a cycle that does not follow the last one restarts the
    /// line. Returns the cycle's first output frame. Thread: process. Real-time safe.
    @_noLocks
    func begin(
        frameCount: Int, frameTime: UInt32, began: UInt64, sinceCycleStartMicroseconds: UInt64,
        mixer: Unmanaged<LiveMixer>
    ) -> Int64 {
        if hasCycled, frameTime != expectedFrameTime {
            // JACK2 also moves its frame counter on by one old period when the buffer size
            // changes, though no cycle was missed: that is not counted, but the line restarts.
            // A stalled server skips whole cycles at once: count each period and the frames.
            let jump = Int(Int32(bitPattern: frameTime &- expectedFrameTime))
            if frameCount == lastFrameCount, jump > 0 {
                skippedCycles.relaxedAdd((jump + frameCount - 1) / frameCount)
                skippedFrames.relaxedAdd(jump)
            } else if frameCount == lastFrameCount {
                repeatedCycles.relaxedAdd(1)
                repeatedFrames.relaxedAdd(-jump)
            }
            mixer._withUnsafeGuaranteedRef { $0.clock.restart() }
        }
        hasCycled = true
        lastFrameCount = frameCount
        expectedFrameTime = frameTime &+ UInt32(frameCount)
        let cycleStart = began &- sinceCycleStartMicroseconds &* 1_000
        return mixer._withUnsafeGuaranteedRef { $0.beginPeriod(frameCount: frameCount, nanoseconds: cycleStart) }
    }

    /// Plays one JACK MIDI event of `count` bytes at `bytes`, `offset` frames into the cycle
    /// that starts at output frame `first`, unless the engine does not play it or --channel
    /// filters it out. Thread: process. Real-time safe.
    @_noLocks
    func play(
        _ bytes: UnsafePointer<UInt8>, count: Int, offset: Int, first: Int64, frameCount: Int,
        mixer: Unmanaged<LiveMixer>
    ) {
        let frame = first + Int64(min(max(offset, 0), frameCount - 1))
        // (two guards, not ||: the operator's autoclosure would retain self)
        guard let event = EngineEvent(midi: bytes, count: count, frame: frame) else {
            midiEventsIgnored.relaxedAdd(1)
            return
        }
        guard channelFilter.accepts(status: event.status) else {
            midiEventsIgnored.relaxedAdd(1)
            return
        }
        mixer._withUnsafeGuaranteedRef { $0.playNow(event) }
        midiEventsPlayed.relaxedAdd(1)
    }

    /// Renders the cycle into the output ports' buffers (and the recording). Thread: process.
    /// Real-time safe.
    @_noLocks
    func finish(frameCount: Int, mixer: Unmanaged<LiveMixer>) {
        let buffers = UnsafePointer(channelBuffers)
        let recording = tap
        mixer._withUnsafeGuaranteedRef { $0.render(frameCount: frameCount, into: buffers, tap: recording) }
    }

    /// Zeroes the output ports' buffers (before `start`). Thread: process. Real-time safe.
    @_noLocks
    func silence(frameCount: Int) {
        for channel in 0..<channelCount { channelBuffers[channel].update(repeating: 0, count: frameCount) }
    }

    /// Counts a cycle that took `busy` nanoseconds. Thread: process. Real-time safe.
    @_noLocks
    func count(busy: UInt64) {
        cycles.relaxedAdd(1)
        busyNanoseconds.relaxedAdd(busy)
        if busy > longestCycleNanoseconds.relaxedLoad() {
            longestCycleNanoseconds.relaxedStore(busy)
        }
    }

    /// The server changed its buffer size. The process callback takes any size, so this only
    /// keeps the figure (a change before the first cycle is the server's start, not counted).
    /// Thread: JACK's notification thread.
    func bufferSizeChanged(to frames: Int) {
        let old = bufferFrames.relaxedExchange(frames)
        if old != frames, cycles.relaxedLoad() > 0 { bufferSizeChanges.relaxedAdd(1) }
    }

    /// A connection between ports `a` and `b` was made or removed. Thread: JACK's notification
    /// thread (a port lookup and atomics only).
    func connectionChanged(_ a: bk_jack_port_id_t, _ b: bk_jack_port_id_t, connected: Bool) {
        if !connected, bk_jack_port_by_id(client, a) == midiPort || bk_jack_port_by_id(client, b) == midiPort {
            midiDisconnections.releasingAdd(1)
        }
        graphChanged.releasingStore(true)
        wakeup.signal()
    }
}
