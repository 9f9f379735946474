import BellkeysControl
import Testing

/// Instants on the monotonic clock: ordered, subtracted to durations, moved by durations.
@Suite struct MonotonicInstants {
    @Test func instantsOrderAndSubtractToSignedDurations() {
        let early: MonotonicInstant = 100_000_000_000
        let late = MonotonicInstant(nanoseconds: 100_007_500_000)
        #expect(early < late)
        #expect(!(late < early))
        #expect(late - early == .microseconds(7_500))
        #expect(early - late == .microseconds(-7_500))
        #expect(early - early == .zero)
    }

    @Test func aDurationMovesAnInstantToTheNanosecond() {
        var now: MonotonicInstant = 5_000_000_000
        #expect(now + .milliseconds(24) == 5_024_000_000)
        #expect(now - .milliseconds(24) == 4_976_000_000)
        #expect(now + .milliseconds(-24) == 4_976_000_000)
        now += .nanoseconds(1)
        #expect(now.nanoseconds == 5_000_000_001)
        // A fraction of a nanosecond is dropped, toward zero.
        #expect(now + .microseconds(0.0009) == now)
        #expect(now + .seconds(2.5) == 7_500_000_001)
    }

    @Test func anInstantReadsAsSecondsAndNanoseconds() {
        let instant: MonotonicInstant = 1_250_000_000
        #expect(instant.seconds == 1.25)
        #expect(instant.description == "1250000000 ns")
    }
}
