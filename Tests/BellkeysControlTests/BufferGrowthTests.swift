import BellkeysControl
import Testing

/// The rule that grows a default ALSA buffer after underruns.
@Suite struct BufferGrowthRule {
    typealias Size = BufferGrowth.Size
    /// The monotonic clock `n` seconds after its start.
    func second(_ n: Int) -> MonotonicInstant { MonotonicInstant(nanoseconds: UInt64(n) * 1_000_000_000) }

    @Test func thePeriodDoublesToFiveHundredAndTwelveThenThePeriodsGrowToFour() {
        var size = Size(periodFrames: 64, periods: 2)
        var steps: [String] = []
        while let next = BufferGrowth.next(after: size) {
            steps.append(next.description)
            size = next
        }
        #expect(
            steps == [
                "128 × 2 frames", "256 × 2 frames", "512 × 2 frames", "512 × 3 frames", "512 × 4 frames",
            ])
        // A size between the steps goes to the next power's step, never past the largest.
        #expect(BufferGrowth.next(after: Size(periodFrames: 300, periods: 2)) == Size(periodFrames: 512, periods: 2))
        #expect(BufferGrowth.next(after: Size(periodFrames: 512, periods: 4)) == nil)
    }

    @Test func threeUnderrunsWithinTenSecondsGrowTheBuffer() {
        var rule = BufferGrowth(size: Size(periodFrames: 64, periods: 2))
        let r1 = rule.observe(underruns: 0, now: second(1))
        #expect(r1 == nil)
        let r2 = rule.observe(underruns: 1, now: second(2))
        #expect(r2 == nil)
        let r3 = rule.observe(underruns: 2, now: second(5))
        #expect(r3 == nil)
        let r4 = rule.observe(underruns: 2, now: second(6))
        #expect(r4 == nil)
        let r5 = rule.observe(underruns: 3, now: second(12))
        #expect(r5 == Size(periodFrames: 128, periods: 2))
        // The device granted it.
        let r6 = rule.grew(to: Size(periodFrames: 128, periods: 2))
        #expect(r6)
        #expect(rule.size == Size(periodFrames: 128, periods: 2) && rule.steps == 1 && rule.first.periodFrames == 64)
    }

    @Test func underrunsFurtherApartThanTenSecondsAreForgiven() {
        var rule = BufferGrowth(size: Size(periodFrames: 64, periods: 2))
        // One every 6 s: any three span 12 s.
        for k in 1...10 {
            let r7 = rule.observe(underruns: k, now: second(k * 6))
            #expect(r7 == nil)
        }
        // Three seen at once (a burst between two looks) count as three.
        let r8 = rule.observe(underruns: 13, now: second(70))
        #expect(r8 == Size(periodFrames: 128, periods: 2))
    }

    @Test func aNewDeviceCountsFromZeroAndEarlierUnderrunsAreForgotten() {
        var rule = BufferGrowth(size: Size(periodFrames: 64, periods: 2))
        _ = rule.observe(underruns: 3, now: second(1))
        rule.grew(to: Size(periodFrames: 128, periods: 2))
        // The reopened device's own count: two are not enough, though five were seen in 2 s.
        let r9 = rule.observe(underruns: 2, now: second(2))
        #expect(r9 == nil)
        let r10 = rule.observe(underruns: 3, now: second(3))
        #expect(r10 == Size(periodFrames: 256, periods: 2))
    }

    @Test func aDeviceThatGivesNoMoreRoomIsNotAskedAgain() {
        var rule = BufferGrowth(size: Size(periodFrames: 64, periods: 2))
        _ = rule.observe(underruns: 3, now: second(1))
        let r11 = rule.grew(to: Size(periodFrames: 64, periods: 2))
        #expect(!r11)
        #expect(!rule.canGrow && rule.steps == 0)
        let r12 = rule.observe(underruns: 10, now: second(2))
        #expect(r12 == nil)
    }

    @Test func itStopsAtTheLargest() {
        var rule = BufferGrowth(size: Size(periodFrames: 512, periods: 3))
        let r13 = rule.observe(underruns: 3, now: second(1))
        #expect(r13 == Size(periodFrames: 512, periods: 4))
        rule.grew(to: Size(periodFrames: 512, periods: 4))
        #expect(!rule.canGrow)
        let r14 = rule.observe(underruns: 30, now: second(2))
        #expect(r14 == nil)
    }
}
