import BellkeysEngine
import Testing

/// Arrival stamping: events keep their phase within the period and wait a constant time.
@Suite struct LiveTiming {
    let second: UInt64 = 1_000_000_000

    @Test func anArrivalPlaysOnePeriodAfterTheFrameOfItsMoment() {
        let clock = FrameClock(sampleRate: 48_000)
        clock.publish(frame: 6_400, nanoseconds: 10 * second)
        var stamper = FrameClock.Stamper(sampleRate: 48_000, periodFrames: 64)
        // 0.5 ms after the period started: 24 frames in, plus one period.
        #expect(stamper.frame(arrivalNanoseconds: 10 * second + 500_000, clock: clock.read()) == 6_400 + 64 + 24)
        // Two arrivals 0.25 ms apart land 12 frames apart: no quantising to the period.
        #expect(stamper.frame(arrivalNanoseconds: 10 * second + 750_000, clock: clock.read()) == 6_400 + 64 + 36)
    }

    @Test func lateWakeUpsDoNotMoveTheLine() {
        let clock = FrameClock(sampleRate: 48_000)
        let period: UInt64 = 1_333_333              // 64 frames at 48 kHz
        clock.publish(frame: 0, nanoseconds: 10 * second)
        clock.publish(frame: 64, nanoseconds: 10 * second + period)
        // The third wake-up comes 3 ms late; the line stays on the earliest pairs.
        clock.publish(frame: 128, nanoseconds: 10 * second + 2 * period + 3_000_000)
        let point = clock.read()!
        #expect(point.frame == 0 || point.frame == 64)
        var stamper = FrameClock.Stamper(sampleRate: 48_000, periodFrames: 64)
        #expect(stamper.frame(arrivalNanoseconds: 10 * second + 5_000_000, clock: point) == 64 + 240)
    }

    @Test func theLineFollowsTheDeviceAfterAWindow() {
        let clock = FrameClock(sampleRate: 48_000)
        clock.publish(frame: 0, nanoseconds: 10 * second)
        // The device clock runs 1 ms later from here on; after two 1-second windows the
        // early pair has aged out and the line is the new one.
        for k in 1...200 {
            let frame = Int64(k) * 480
            clock.publish(frame: frame, nanoseconds: 10 * second + UInt64(k) * 10_000_000 + 1_000_000)
        }
        let point = clock.read()!
        let offset = Int64(point.nanoseconds) - Int64(10 * second) - point.frame * 1_000_000_000 / 48_000
        #expect(offset == 1_000_000)
    }

    @Test func restartForgetsTheLine() {
        let clock = FrameClock(sampleRate: 48_000)
        clock.publish(frame: 0, nanoseconds: 10 * second)
        clock.restart()
        // After an underrun the device starts again later: 50 ms for frame 64.
        clock.publish(frame: 64, nanoseconds: 10 * second + 50_000_000)
        #expect(clock.read()! == (64, 10 * second + 50_000_000))
    }

    @Test func stampsNeverGoBackwards() {
        let clock = FrameClock(sampleRate: 48_000)
        clock.publish(frame: 1_000, nanoseconds: 10 * second)
        var stamper = FrameClock.Stamper(sampleRate: 48_000, periodFrames: 64)
        let first = stamper.frame(arrivalNanoseconds: 10 * second + 2_000_000, clock: clock.read())
        // An arrival stamped before the clock's point (read before a publish) keeps the order.
        let second = stamper.frame(arrivalNanoseconds: 10 * second - 1_000_000, clock: clock.read())
        #expect(first == 1_000 + 64 + 96)
        #expect(second == first)
    }

    /// The line's offset: how much later than `10 s + frame / rate` its point lies, in ns.
    func lineOffset(_ clock: borrowing FrameClock) -> Int64 {
        let point = clock.read()!
        return Int64(point.nanoseconds) - Int64(10 * second) - point.frame * 1_000_000_000 / 48_000
    }

    @Test func aDeviceThatSlipsIsFollowedWithinATenthOfASecond() {
        let clock = FrameClock(sampleRate: 48_000)
        // 1 s of 480-frame periods (10 ms) on the line.
        for k in 0..<100 { clock.publish(frame: Int64(k) * 480, nanoseconds: 10 * second + UInt64(k) * 10_000_000) }
        #expect(lineOffset(clock) == 0)
        // The device skips a buffer (21 ms) without an underrun: every pair is 21 ms late now.
        var k = 100
        while lineOffset(clock) == 0, k < 200 {
            clock.publish(frame: Int64(k) * 480, nanoseconds: 10 * second + UInt64(k) * 10_000_000 + 21_000_000)
            k += 1
        }
        #expect(lineOffset(clock) == 21_000_000)
        // Noticed after one block: 0.1 s and 8 pairs, plus the pairs of the block under way.
        #expect(k - 100 <= 21)
        #expect(clock.slips.load(ordering: .relaxed) == 1)
    }

    @Test func lateWakeUpsAreNotASlip() {
        let clock = FrameClock(sampleRate: 48_000)
        // 2 s of 64-frame periods, two of every three woken 3 ms late (snd-aloop's tick does that).
        for k in 0..<1_500 {
            let late: UInt64 = k % 3 == 0 ? 0 : 3_000_000
            clock.publish(frame: Int64(k) * 64, nanoseconds: 10 * second + UInt64(k) * 1_333_333 + UInt64(k) / 3 + late)
        }
        #expect(abs(lineOffset(clock)) < 1_000)
        #expect(clock.slips.load(ordering: .relaxed) == 0)
    }

    @Test func nothingIsStampedBeforeTheRenderThreadStarts() {
        let clock = FrameClock(sampleRate: 48_000)
        #expect(clock.read() == nil)
        var stamper = FrameClock.Stamper(sampleRate: 48_000, periodFrames: 64)
        #expect(stamper.frame(arrivalNanoseconds: 5, clock: clock.read()) == 0)
    }
}

/// What a keyboard held when it went away is let go of.
@Suite struct HeldNotesTracking {
    @Test func aLostSourceReleasesItsKeysAndPedal() {
        var held = HeldNotes()
        held.track(source: 1, status: 0x90, data1: 60, data2: 100)
        held.track(source: 1, status: 0x91, data1: 72, data2: 90)
        held.track(source: 1, status: 0x90, data1: 64, data2: 100)
        held.track(source: 1, status: 0x80, data1: 64, data2: 0)         // let go already
        held.track(source: 1, status: 0x90, data1: 67, data2: 0)         // velocity 0 is a note-off
        held.track(source: 1, status: 0xB0, data1: 64, data2: 127)
        #expect(held.noteCount(source: 1) == 2)
        let messages = held.release(source: 1)
        #expect(messages.map { [$0.status, $0.data1, $0.data2] } == [[0x80, 60, 0], [0xB0, 64, 0], [0x81, 72, 0]])
        #expect(held.release(source: 1).isEmpty)
    }

    @Test func keysAnotherSourceHoldsStayDown() {
        var held = HeldNotes()
        held.track(source: 1, status: 0x90, data1: 60, data2: 100)
        held.track(source: 1, status: 0x90, data1: 62, data2: 100)
        held.track(source: 1, status: 0xB0, data1: 64, data2: 127)
        held.track(source: 2, status: 0x90, data1: 60, data2: 100)
        held.track(source: 2, status: 0xB0, data1: 64, data2: 100)
        #expect(held.release(source: 1).map { [$0.status, $0.data1] } == [[0x80, 62]])
    }

    @Test func allNotesOffForgetsTheChannel() {
        var held = HeldNotes()
        held.track(source: 1, status: 0x90, data1: 60, data2: 100)
        held.track(source: 1, status: 0xB0, data1: 123, data2: 0)
        #expect(held.release(source: 1).isEmpty)
    }
}

/// Delivery stamps: the kernel's stamp on the sequencer queue, turned into the monotonic clock.
@Suite struct DeliveryStamps {
    let second: UInt64 = 1_000_000_000

    @Test func aStampMapsThroughTheMiddleOfTheBracket() {
        var clock = DeliveryClock()
        // The queue read 2.000 s between monotonic 100.000 000 and 100.000 010 s.
        let kept = clock.sample(before: 100_000_000_000, queue: 2_000_000_000, after: 100_000_010_000)
        #expect(kept)
        #expect(clock.offset == 98_000_005_000)
        // An event delivered at queue time 2.5 s and read 7 ms later (a slow wake-up) arrived
        // at 100.5 s + 5 µs: the wake-up's delay is not part of its arrival.
        #expect(clock.arrival(queue: 2_500_000_000, readAt: 100_507_000_000) == 100_500_005_000)
    }

    @Test func aPreemptedMeasurementIsIgnored() {
        var clock = DeliveryClock()
        let first = clock.sample(before: 100_000_000_000, queue: 2_000_000_000, after: 100_000_000_000)
        #expect(first)
        // 300 µs between the readings: the thread was preempted. Its offset (1 ms smaller)
        // would be wrong; it is not used.
        let preempted = clock.sample(before: 100_500_000_000, queue: 2_501_000_000, after: 100_500_300_000)
        #expect(!preempted)
        #expect(clock.offset == 98_000_000_000)
        // Readings out of order are refused too.
        let backwards = clock.sample(before: 100_600_000_000, queue: 2_602_000_000, after: 100_500_000_000)
        #expect(!backwards)
        #expect(clock.offset == 98_000_000_000)
    }

    @Test func aQueueThatJumpsAheadNeverMakesADeliveryEarly() {
        var clock = DeliveryClock()
        clock.sample(before: 100_000_000_000, queue: 2_000_000_000, after: 100_000_000_000)
        // A note is delivered at 100.300 s: the queue reads 2.300 s. Then the guest stalls, and the
        // queue timer, catching up, counts 20 ms too many: at the next wake-up (100.310 s) the
        // queue reads 2.330 s.
        clock.sample(before: 100_310_000_000, queue: 2_330_000_000, after: 100_310_000_000)
        #expect(clock.offset == 98_000_000_000)
        // The note read now arrived at 100.300 s, not 20 ms before.
        #expect(clock.arrival(queue: 2_300_000_000, readAt: 100_310_000_000) == 100_300_000_000)
        // A note delivered after the jump (queue 2.335 s, at 100.315 s) and read in the same batch
        // is placed at its read, never later.
        #expect(clock.arrival(queue: 2_335_000_000, readAt: 100_316_000_000) == 100_316_000_000)
        // From the next wake-up on, deliveries map through the new offset.
        clock.sample(before: 100_400_000_000, queue: 2_420_000_000, after: 100_400_000_000)
        #expect(clock.offset == 97_980_000_000)
        #expect(clock.arrival(queue: 2_450_000_000, readAt: 100_440_000_000) == 100_430_000_000)
    }

    @Test func withoutAMeasurementOrAfterTheReadTheArrivalIsTheRead() {
        var clock = DeliveryClock()
        #expect(clock.arrival(queue: 5_000_000_000, readAt: 42_000_000_000) == 42_000_000_000)
        clock.sample(before: 100_000_000_000, queue: 2_000_000_000, after: 100_000_000_000)
        // Timer jitter may put the stamp 0.1 ms after the read: it is clamped to the read.
        #expect(clock.arrival(queue: 3_000_100_000, readAt: 101_000_000_000) == 101_000_000_000)
    }
}
