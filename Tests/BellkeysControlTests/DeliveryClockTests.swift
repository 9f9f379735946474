import BellkeysControl
import Testing

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
