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
