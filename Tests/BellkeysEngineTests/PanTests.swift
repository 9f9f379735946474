import Foundation
import BellkeysEngine
import EngineTestSupport
import Testing

/// The pan law (a key's `pan` in the map) and CC10, the channel's pan.
@Suite struct Pan {
    /// Equal power, unity at the centre: left² + right² = 2 everywhere, atan(right/left) is
    /// (pan + 1) π/4, the centre is exactly 1 and 1, the ends exactly √2 and 0.
    @Test func theLawIsEqualPowerWithUnityAtTheCentre() {
        #expect(panGains(0) == (1, 1))
        #expect(panGains(-1) == (Float(2.0.squareRoot()), 0))
        #expect(panGains(1) == (0, Float(2.0.squareRoot())))
        for k in -20...20 {
            let pan = Double(k) / 20
            let (left, right) = panGains(pan)
            let power = Double(left) * Double(left) + Double(right) * Double(right)
            #expect(abs(power - 2) < 1e-6, "pan \(pan): power \(power)")
            let theta = atan2(Double(right), Double(left))
            #expect(abs(theta - (pan + 1) * Double.pi / 4) < 1e-6, "pan \(pan): θ \(theta)")
        }
        // -0.5 is the mirror of 0.5.
        #expect(panGains(-0.5).left == panGains(0.5).right && panGains(-0.5).right == panGains(0.5).left)
    }

    @Test func controllerTenCoversTheRangeWithSixtyFourAtTheCentre() {
        #expect(panPosition(controllerValue: 64) == 0)
        #expect(panPosition(controllerValue: 0) == -1)
        #expect(panPosition(controllerValue: 127) == 1)
        #expect(panPosition(controllerValue: 32) == -0.5)
    }

    /// CC10 moves a centred bell: hard left after the ramp, the right side silent; back to 64,
    /// both sides the mono bell again, bit for bit; every step of the move within the ramp's.
    @Test func controllerTenPansTheChannelWithoutAClick() {
        let keys = [KeySettings(note: 60, sampleIndex: 0)]
        let engine = makeEngine(samples: [constant(0.5, 20_000)], keys: keys)
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        engine.enqueue(.control(frame: 1_000, controller: 10, value: 0))
        engine.enqueue(.control(frame: 3_000, controller: 10, value: 64))
        let (left, right) = renderStereo(engine, 5_000)
        #expect(left[999] == right[999])
        let root2 = Float(2.0.squareRoot())
        // After the 64-frame ramp: left √2 × 0.5, right 0.
        expectClose(left[1_100], 0.5 * root2)
        #expect(right[1_100] == 0)
        var biggest: Float = 0
        for j in 1..<5_000 { biggest = max(biggest, abs(left[j] - left[j - 1]), abs(right[j] - right[j - 1])) }
        #expect(biggest < 0.5 * root2 / 64 + 1e-6, "largest step \(biggest)")
        // Back at the centre: both sides exactly equal again.
        for j in 3_100..<5_000 { #expect(left[j] == right[j]) }
        expectClose(left[3_100], 0.5)
    }

    /// A panned key and CC10 together: the channel's pan scales each side of the key's.
    @Test func controllerTenMovesPannedKeysToo() {
        let (l, r) = panGains(0.5)
        let keys = [KeySettings(note: 60, sampleIndex: 0, leftGain: l, rightGain: r)]
        let engine = makeEngine(samples: [constant(0.5, 4_000)], keys: keys)
        engine.enqueue(.control(frame: 0, controller: 10, value: 32))
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let (left, right) = renderStereo(engine, 200)
        let (cl, cr) = panGains(-0.5)
        expectClose(left[100], 0.5 * l * cl)
        expectClose(right[100], 0.5 * r * cr)
    }

    /// Mono output with CC10: the average of the two sides, as for panned keys.
    @Test func monoIsTheAverageOfTheSides() {
        let keys = [KeySettings(note: 60, sampleIndex: 0)]
        let a = makeEngine(samples: [constant(0.5, 4_000)], keys: keys)
        let b = makeEngine(samples: [constant(0.5, 4_000)], keys: keys)
        for e in [a, b] {
            e.enqueue(.control(frame: 0, controller: 10, value: 100))
            e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        }
        let (left, right) = renderStereo(a, 500)
        let mono = render(b, 500)
        for j in 0..<500 { expectClose(mono[j], (left[j] + right[j]) / 2) }
        #expect(left[300] < right[300])
    }
}
