import BellkeysControl
import BellkeysEngine
import BellkeysModel
import Glibc
import Synchronization
import Testing

/// The parts that two threads share, run with both threads really running. Exact results here;
/// data races are ThreadSanitizer's to find: `Tools/race-check` (see docs/testing.md).
@Suite struct Concurrency {
    @Test func theQueueHandsEveryEventOverInOrder() {
        let queue = Box(EventQueue(capacity: 16))
        let count = 200_000
        let fullSeen = Atomic<Int>(0)
        let producer = spawn {
            for i in 0..<count {
                while !queue.value.push(.noteOn(frame: Int64(i), note: 60, velocity: 1 + i % 127)) {
                    fullSeen.wrappingAdd(1, ordering: .relaxed)
                    sched_yield()
                }
            }
        }
        var expected = 0
        var outOfOrder = 0
        while expected < count {
            guard let event = queue.value.peek() else {
                sched_yield()
                continue
            }
            if event.frame != Int64(expected) || Int(event.data2) != 1 + expected % 127 { outOfOrder += 1 }
            queue.value.pop()
            expected += 1
        }
        join(producer)
        #expect(outOfOrder == 0)
        #expect(queue.value.count == 0)
        #expect(queue.value.peek() == nil)
    }

    /// The live shape: a control thread sends notes and master volume and installs a new map
    /// while a render thread runs `LiveMixer` periods, and a third thread reads the counters and
    /// the clock. Every note is an impulse of 1/1024 (old map) or 2/1024 (new map), so the sum of
    /// everything rendered is exactly the notes each map received.
    @Test func notesVolumeAndAReloadCrossThreadsWithoutLoss() {
        let impulse: [Float] = [1.0 / 1024]
        let old = makeEngine(samples: [impulse], keys: [KeySettings(note: 60, sampleIndex: 0)], polyphony: 64)
        let new = makeEngine(
            samples: [impulse.map { $0 * 2 }], keys: [KeySettings(note: 60, sampleIndex: 0)], polyphony: 64)
        let mixer = LiveMixer(engine: old, channels: 1, format: .f32, maximumPeriodFrames: 64)
        let periods = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let rendered = Box(0.0)
        let render = spawn {
            let out = mixer.output.assumingMemoryBound(to: Float.self)
            var nanoseconds: UInt64 = 1_000_000
            while !stop.load(ordering: .acquiring) {
                mixer.renderPeriod(frameCount: 64, nanoseconds: nanoseconds)
                for i in 0..<64 { rendered.value += Double(out[i]) }
                nanoseconds += 1_333_333
                periods.wrappingAdd(1, ordering: .releasing)
            }
        }
        let notesPerMap = 3_000
        let sent = Box((old: 0, new: 0))
        let control = spawn {
            // Past the CC7 ramp of the first period, so every note plays at unity gain.
            while periods.load(ordering: .acquiring) < 2 { sched_yield() }
            var stamper = FrameClock.Stamper(sampleRate: 48_000, periodFrames: 64)
            for (engine, isNew) in [(old, false), (new, true)] {
                if isNew {
                    #expect(mixer.install(new))
                    // Past the new engine's own CC7 ramp too.
                    while mixer.installPending { sched_yield() }
                    let installed = periods.load(ordering: .acquiring)
                    while periods.load(ordering: .acquiring) < installed + 2 { sched_yield() }
                }
                var i = 0
                while i < notesPerMap {
                    // Four notes a period: far below the polyphony, so no voice is stolen.
                    let seen = periods.load(ordering: .acquiring)
                    for _ in 0..<4 where i < notesPerMap {
                        let frame = stamper.frame(
                            arrival: MonotonicInstant(nanoseconds: UInt64(seen) * 1_333_333), clock: mixer.clock.read())
                        if engine.enqueue(.noteOn(frame: frame, note: 60, velocity: 127)) {
                            if isNew { sent.value.new += 1 } else { sent.value.old += 1 }
                        }
                        i += 1
                    }
                    engine.setMasterVolume(decibels: 0)
                    while periods.load(ordering: .acquiring) == seen { sched_yield() }
                }
                if !isNew { _ = mixer.takeRetired() }
            }
            // Ten more periods: every queued note has played and the old map has been retired.
            let last = periods.load(ordering: .acquiring)
            while periods.load(ordering: .acquiring) < last + 10 { sched_yield() }
            #expect(mixer.takeRetired() === old)
        }
        let watcher = spawn {
            while !stop.load(ordering: .acquiring) {
                _ = old.voiceCount.load(ordering: .relaxed) + new.peakVoiceCount.load(ordering: .relaxed)
                _ = old.droppedEvents.load(ordering: .relaxed) + new.stolenVoices.load(ordering: .relaxed)
                _ = mixer.clock.read()
                _ = mixer.installPending
                sched_yield()
            }
        }
        join(control)
        stop.store(true, ordering: .releasing)
        join(render)
        join(watcher)
        #expect(sent.value.old == notesPerMap && sent.value.new == notesPerMap)
        #expect(rendered.value * 1024 == Double(sent.value.old + 2 * sent.value.new))
        #expect(old.stolenVoices.load(ordering: .relaxed) == 0 && new.stolenVoices.load(ordering: .relaxed) == 0)
        #expect(old.droppedEvents.load(ordering: .relaxed) == 0 && new.droppedEvents.load(ordering: .relaxed) == 0)
    }

    /// A reader never sees a frame from one `publish` with the time from another.
    @Test func theClockNeverTearsAPair() {
        let clock = Box(FrameClock(sampleRate: 48_000))
        let stop = Atomic<Bool>(false)
        // Time = frame × 62_500 / 3 ns (exact at 48 kHz for multiples of 3 frames) plus up to
        // 999 ns of lateness; a torn pair is off by at least a period, 1.33 ms.
        let writer = spawn {
            var frame: Int64 = 0
            while !stop.load(ordering: .acquiring) {
                clock.value.publish(frame: frame, nanoseconds: UInt64(frame / 3 * 62_500) + UInt64(frame % 1_000))
                frame += 192
            }
        }
        var reads = 0
        var torn = 0
        while reads < 200_000 {
            guard let pair = clock.value.read() else { continue }
            let lateness = Int64(pair.nanoseconds) - pair.frame / 3 * 62_500
            if pair.frame % 192 != 0 || lateness < 0 || lateness > 999 { torn += 1 }
            reads += 1
        }
        stop.store(true, ordering: .releasing)
        join(writer)
        #expect(torn == 0)
    }
}

/// Shares a value between the test thread and the threads it starts, which the test joins
/// before it reads the results.
final class Box<Value: ~Copyable>: @unchecked Sendable {
    var value: Value
    init(_ value: consuming Value) { self.value = value }
}

/// Starts a thread running `body`.
func spawn(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(
        &thread, nil,
        { context in
            let box = Unmanaged<Box<@Sendable () -> Void>>.fromOpaque(context!).takeRetainedValue()
            box.value()
            return nil
        }, context)
    precondition(status == 0, "pthread_create: \(status)")
    return thread
}

func join(_ thread: pthread_t) { pthread_join(thread, nil) }
