import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Foundation
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

/// Voices at one place are mixed four at a time into the place's bus, each place with its own
/// batch: nine voices at three places, struck together and in turn across the places, sum to
/// the nine voices rendered one by one.
@Suite struct PanGroupBatches {
    @Test func voicesAtThreePlacesSumToTheirSoloRenders() {
        // Quiet sawtooths: the limiter never acts.
        let samples: [[Float]] = (0..<9).map { (k: Int) -> [Float] in
            (0..<6_000).map { (i: Int) -> Float in Float((i * (k + 2)) % 97 - 48) / 1_200 }
        }
        let places = [-0.5, 0.2, 0.7]
        let keys = (0..<9).map { k -> KeySettings in
            let (left, right) = panGains(places[k % 3])
            return KeySettings(note: 60 + k, sampleIndex: k, noteOff: .ring, leftGain: left, rightGain: right)
        }
        func render(_ notes: [Int]) -> (left: [Float], right: [Float]) {
            let engine = makeEngine(samples: samples, keys: keys, polyphony: 16) { $0.maxBlockFrames = 256 }
            for note in notes { engine.enqueue(EngineEvent.noteOn(frame: 0, note: 60 + note, velocity: 127)) }
            return renderStereo(engine, 4_096, block: 256)
        }
        let all = render(Array(0..<9))
        let solos = (0..<9).map { render([$0]) }
        var worst = 0.0
        for j in 0..<4_096 {
            let left = solos.reduce(0.0) { $0 + Double($1.left[j]) },
                right = solos.reduce(0.0) { $0 + Double($1.right[j]) }
            worst = max(worst, abs(Double(all.left[j]) - left), abs(Double(all.right[j]) - right))
        }
        #expect(all.left.contains { $0 != 0 } && all.left != all.right)
        #expect(worst < 1e-5, "the nine voices differ from their solos by up to \(worst)")
    }
}
