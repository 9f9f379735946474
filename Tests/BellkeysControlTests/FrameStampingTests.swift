import BellkeysControl
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
        #expect(
            stamper.frame(arrival: MonotonicInstant(nanoseconds: 10 * second + 500_000), clock: clock.read()) == 6_400
                + 64 + 24)
        // Two arrivals 0.25 ms apart land 12 frames apart: no quantising to the period.
        #expect(
            stamper.frame(arrival: MonotonicInstant(nanoseconds: 10 * second + 750_000), clock: clock.read()) == 6_400
                + 64 + 36)
    }

    @Test func lateWakeUpsDoNotMoveTheLine() {
        let clock = FrameClock(sampleRate: 48_000)
        let period: UInt64 = 1_333_333 // 64 frames at 48 kHz
        clock.publish(frame: 0, nanoseconds: 10 * second)
        clock.publish(frame: 64, nanoseconds: 10 * second + period)
        // The third wake-up comes 3 ms late; the line stays on the earliest pairs.
        clock.publish(frame: 128, nanoseconds: 10 * second + 2 * period + 3_000_000)
        let point = clock.read()!
        #expect(point.frame == 0 || point.frame == 64)
        var stamper = FrameClock.Stamper(sampleRate: 48_000, periodFrames: 64)
        #expect(
            stamper.frame(arrival: MonotonicInstant(nanoseconds: 10 * second + 5_000_000), clock: point) == 64 + 240)
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
        let first = stamper.frame(arrival: MonotonicInstant(nanoseconds: 10 * second + 2_000_000), clock: clock.read())
        // An arrival stamped before the clock's point (read before a publish) keeps the order.
        let second = stamper.frame(arrival: MonotonicInstant(nanoseconds: 10 * second - 1_000_000), clock: clock.read())
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
        #expect(stamper.frame(arrival: 5, clock: clock.read()) == 0)
    }
}
