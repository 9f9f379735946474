import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Foundation
import Testing

/// No clicks anywhere: no sample-to-sample step out of proportion to the local level, strikes
/// aside. The detector looks at the second difference (a step or a kink in the waveform is a
/// spike there) against its own RMS over the 10 ms around it.
@Suite struct NoClicks {
    /// Frames where |x[n+1] - 2x[n] + x[n-1]| passes 8 times its RMS over ±10 ms (itself and
    /// its neighbours left out) plus a floor of 1e-5, away from the frames in `strikes` (±2 ms).
    func clicks(_ x: [Float], strikes: [Int]) -> [Int] {
        let n = x.count
        guard n > 3 else { return [] }
        var d2 = [Double](repeating: 0, count: n)
        for i in 1..<n - 1 { d2[i] = Double(x[i + 1]) - 2 * Double(x[i]) + Double(x[i - 1]) }
        var squares = [Double](repeating: 0, count: n + 1)
        for i in 0..<n { squares[i + 1] = squares[i] + d2[i] * d2[i] }
        let half = 480
        var found: [Int] = []
        for i in 1..<n - 1 {
            if strikes.contains(where: { abs($0 - i) <= 96 }) { continue }
            let a = max(0, i - half), b = min(n, i + half + 1)
            let near = squares[min(n, i + 3)] - squares[max(0, i - 2)]
            let count = Double(b - a - (min(n, i + 3) - max(0, i - 2)))
            let rms = ((squares[b] - squares[a] - near) / max(count, 1)).squareRoot()
            if abs(d2[i]) > 8 * rms + 1e-5 { found.append(i) }
        }
        return found
    }

    /// A bell of five partials (hum, prime, tierce, nominal, upper octave), decaying, starting at
    /// 0, its last 20 ms faded to 0 (as the loader fades a sample that stops short).
    func bell(_ frequency: Double, seconds: Double = 1.5) -> [Float] {
        let partials: [(Double, Double, Double)] = [
            (0.5, 0.3, 1.0), (1, 0.25, 1.5), (1.2, 0.15, 2.5), (2, 0.2, 2.0), (4, 0.1, 4.0),
        ]
        let count = Int(seconds * 48_000)
        return (0..<count).map { i in
            let t = Double(i) / 48_000
            let fade = min(1, Double(count - 1 - i) / 960)
            return Float(
                fade * partials.reduce(0.0) { $0 + $1.1 * sin(2 * .pi * frequency * $1.0 * t) * exp(-$1.2 * t) })
        }
    }

    @Test func theDetectorFindsACut() {
        var x = bell(440)
        for i in 20_000..<x.count { x[i] = 0 } // cut, as a voice ended without a fade
        let found = clicks(x, strikes: [0])
        #expect(found.contains { abs($0 - 20_000) <= 1 }, "\(found.prefix(5))")
        // And nothing on the whole bell, or the same bell faded over 5 ms instead.
        var faded = bell(440)
        for i in 20_000..<faded.count { faded[i] *= Float(max(0, 1 - Double(i - 20_000) / 240)) }
        #expect(clicks(bell(440), strikes: [0]).isEmpty)
        #expect(clicks(faded, strikes: [0]).isEmpty, "\(clicks(faded, strikes: [0]).prefix(5))")
    }

    /// Everything that moves a gain, at once: damping, the pedal, choking, stealing, all notes
    /// off, CC7, CC11 and CC10 sweeps, panned keys, velocity timbre, a church: no click on
    /// either side.
    @Test(arguments: [ReverbPreset.off, .church])
    func aBusyPerformanceHasNoClick(room: ReverbPreset) {
        let (l, r, stolen, limited) = busyPerformance(room: room, release: 0.05)
        #expect(stolen > 0)
        #expect(limited == 0, "the limiter's own attack is not what this checks")
        #expect(l.isEmpty && r.isEmpty, "clicks at \(l.prefix(5)) (left), \(r.prefix(5)) (right)")
    }

    /// The same performance with the damped keys' release planted at one frame: every note-off
    /// of a damped key still sounding is a click, and the detector finds them.
    @Test func theDetectorFindsOneFrameReleases() {
        let (l, r, _, _) = busyPerformance(room: .off, release: 0.00002)
        #expect(l.count >= 5 && r.count >= 5, "\(l.count) left, \(r.count) right")
    }

    /// Renders the performance; the clicks found on each side, stolen voices, limited frames.
    func busyPerformance(room: ReverbPreset, release: Double) -> (left: [Int], right: [Int], stolen: Int, limited: Int)
    {
        var samples: [[Float]] = []
        var keys: [KeySettings] = []
        for k in 0..<13 {
            samples.append(bell(262 * pow(2, Double(k) / 12)))
            let (l, r) = panGains(Double(k - 6) / 10)
            keys.append(
                KeySettings(
                    note: 60 + k, sampleIndex: k, gain: 0.5,
                    noteOff: k % 3 == 0 ? .ring : .damp(releaseSeconds: release),
                    chokeGroup: k == 12 || k == 11 ? 1 : 0, leftGain: l, rightGain: r))
        }
        let engine = makeEngine(
            samples: samples, keys: keys, polyphony: 4,
            reverb: ReverbSettings(preset: room, mix: 0.3), velocityTimbre: 0.8)
        var strikes: [Int] = []
        for k in 0..<60 {
            let frame = 1_000 + k * 1_700 + (k * 37) % 300
            engine.enqueue(.noteOn(frame: Int64(frame), note: 60 + (k * 5) % 13, velocity: 20 + (k * 29) % 107))
            strikes.append(frame)
            if k % 4 == 1 { engine.enqueue(.noteOff(frame: Int64(frame + 900), note: 60 + (k * 5) % 13)) }
            if k % 10 == 3 { engine.enqueue(.control(frame: Int64(frame + 400), controller: 64, value: 127)) }
            if k % 10 == 7 { engine.enqueue(.control(frame: Int64(frame + 400), controller: 64, value: 0)) }
            if k % 6 == 2 { engine.enqueue(.control(frame: Int64(frame + 700), controller: 10, value: (k * 41) % 128)) }
            if k % 7 == 4 {
                engine.enqueue(.control(frame: Int64(frame + 300), controller: 7, value: 40 + (k * 13) % 88))
            }
            if k % 9 == 5 {
                engine.enqueue(.control(frame: Int64(frame + 200), controller: 11, value: 50 + (k * 7) % 78))
            }
            if k % 15 == 14 { engine.enqueue(.control(frame: Int64(frame + 600), controller: 123, value: 0)) }
            if k % 11 == 10 {
                engine.enqueue(.control(frame: Int64(frame + 500), controller: 91, value: (k * 17) % 128))
            }
        }
        let frames = 1_000 + 60 * 1_700 + 96_000
        let (left, right) = renderStereo(engine, frames, block: 64)
        return (
            clicks(left, strikes: strikes), clicks(right, strikes: strikes),
            engine.stolenVoices.load(ordering: .relaxed), engine.limitedFrames.load(ordering: .relaxed)
        )
    }
}
