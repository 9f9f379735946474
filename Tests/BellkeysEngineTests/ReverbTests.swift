import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Foundation
import Testing

/// The reverb measured as a room acoustician would: an impulse's decay (Schroeder integration,
/// T30), the tail's stereo correlation, its end in digital zero, its DC, and no denormals.
@Suite struct Room {
    /// An impulse (one full-scale frame) through the room, mix 1, rendered until the engine is
    /// silent (at most 20 s): the left and right channels.
    func impulseResponse(_ preset: ReverbPreset) -> (left: [Float], right: [Float]) {
        var impulse = [Float](repeating: 0, count: 4)
        impulse[0] = 1
        let engine = makeEngine(
            samples: [impulse], keys: [KeySettings(note: 60, sampleIndex: 0)],
            reverb: ReverbSettings(preset: preset, mix: 1))
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        var left: [Float] = [], right: [Float] = []
        let block = 1_024
        var l = [Float](repeating: 0, count: block), r = [Float](repeating: 0, count: block)
        while left.count < 20 * 48_000 {
            l.withUnsafeMutableBufferPointer { lb in
                r.withUnsafeMutableBufferPointer { rb in
                    engine.render(left: lb.baseAddress!, right: rb.baseAddress!, frameCount: block)
                }
            }
            left += l
            right += r
            if engine.isSilent() { break }
        }
        return (left, right)
    }

    @Test func eachPresetRingsLongerAndTheChurchAtLeastThreeSeconds() {
        var times: [Double] = []
        for preset in [ReverbPreset.room, .hall, .church] {
            let (left, right) = impulseResponse(preset)
            times.append(schroederT30(left, right, rate: 48_000))
        }
        print("T30 room \(times[0]) s, hall \(times[1]) s, church \(times[2]) s")
        #expect(times[0] < times[1] && times[1] < times[2])
        #expect(times[2] >= 3)
        // The figures docs/map.md gives (the reverb is deterministic).
        #expect(abs(times[0] - 0.524) < 0.01 && abs(times[1] - 1.584) < 0.01 && abs(times[2] - 3.627) < 0.01)
        // Each near its design (its low-frequency RT60; the damping shortens the broadband decay).
        #expect(
            abs(times[0] - 0.7) < 0.7 * 0.35 && abs(times[1] - 2.0) < 2.0 * 0.35 && abs(times[2] - 4.5) < 4.5 * 0.35)
    }

    @Test(arguments: [ReverbPreset.room, .hall, .church])
    func theTailIsStereoNotDualMono(preset: ReverbPreset) {
        let (left, right) = impulseResponse(preset)
        // From 50 ms on, over 1 s.
        let start = 2_400, end = min(left.count, start + 48_000)
        var lr = 0.0, ll = 0.0, rr = 0.0
        for i in start..<end {
            lr += Double(left[i]) * Double(right[i])
            ll += Double(left[i]) * Double(left[i])
            rr += Double(right[i]) * Double(right[i])
        }
        let correlation = lr / (ll * rr).squareRoot()
        print("\(preset): inter-channel correlation of the tail \(correlation)")
        #expect(abs(correlation) < 0.3)
        let documented: [ReverbPreset: Double] = [.room: -0.091, .hall: -0.063, .church: -0.060]
        #expect(abs(correlation - documented[preset]!) < 0.005)
        #expect(ll > 0 && rr > 0)
    }

    /// The tail ends in digital zero within about twice the RT60 and stays there; there is no
    /// DC; no sample is ever subnormal.
    @Test(arguments: [ReverbPreset.room, .hall, .church])
    func theTailEndsInDigitalZeroWithoutDCOrDenormals(preset: ReverbPreset) {
        let (left, right) = impulseResponse(preset)
        let lastSound = max(left.lastIndex { $0 != 0 } ?? 0, right.lastIndex { $0 != 0 } ?? 0)
        let bound: [ReverbPreset: Double] = [.room: 0.7, .hall: 2.0, .church: 4.5]
        let seconds = Double(lastSound) / 48_000
        print("\(preset): digital zero after \(seconds) s")
        #expect(seconds < 2 * bound[preset]! + 0.5)
        let documented: [ReverbPreset: Double] = [.room: 0.94, .hall: 2.63, .church: 5.71]
        #expect(abs(seconds - documented[preset]!) < 0.01)
        #expect(left.count < 20 * 48_000, "the engine went silent")
        let subnormal = left.indices.filter { left[$0].isSubnormal || right[$0].isSubnormal }
        if let first = subnormal.first {
            print(
                "\(preset): \(subnormal.count) subnormal samples, first at \(first) (\(left[first]), \(right[first])), last at \(subnormal.last!)"
            )
        }
        #expect(subnormal.isEmpty)
        // The room's sound alone: from 5 ms on (the dry impulse is the first 4 frames).
        let tail = left[240..<lastSound]
        let sum = tail.reduce(0.0) { $0 + Double($1) }, power = tail.reduce(0.0) { $0 + Double($1) * Double($1) }
        let mean = sum / Double(tail.count), rms = (power / Double(tail.count)).squareRoot()
        #expect(abs(mean) < 0.01 * rms, "DC \(mean) against RMS \(rms)")
    }

    /// Same input, same bytes.
    @Test func theSameInputGivesTheSameSamples() {
        let a = impulseResponse(.hall), b = impulseResponse(.hall)
        #expect(a.left.map(\.bitPattern) == b.left.map(\.bitPattern))
        #expect(a.right.map(\.bitPattern) == b.right.map(\.bitPattern))
    }

    /// CC91 is the channel's send: at 0 the dry bell alone, exactly; at 127 the full mix.
    @Test func controllerNinetyOneSendsTheChannelIntoTheRoom() {
        let keys = [KeySettings(note: 60, sampleIndex: 0)]
        let wave: [Float] = (0..<4_800).map { Float(($0 * 7) % 100 - 50) / 100 }
        let dry = makeEngine(samples: [wave], keys: keys)
        let unsent = makeEngine(samples: [wave], keys: keys, reverb: ReverbSettings(preset: .hall, mix: 0.5))
        let sent = makeEngine(samples: [wave], keys: keys, reverb: ReverbSettings(preset: .hall, mix: 0.5))
        unsent.enqueue(.control(frame: 0, controller: 91, value: 0))
        for e in [dry, unsent, sent] { e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100)) }
        let d = render(dry, 9_600), u = render(unsent, 9_600), s = render(sent, 9_600)
        #expect(d == u)
        #expect(d != s)
        #expect(s[6_000] != 0 && d[6_000] == 0) // the bell has ended; the room rings on
    }
}

/// The block reverb works on chunks of up to 64 frames, 4 frames to a vector, with its own paths
/// for chunks under 4 frames and for the lines' ends: whatever the periods the device asks for,
/// and at every rate, the room is the same room.
@Suite struct RoomAtAnyBlockAndRate {
    /// 3 s of a 10 ms noise burst (deterministic) through `preset` at mix 1, rendered in blocks
    /// of `block` frames (the engine's longest block as well): left, right.
    func burst(_ preset: ReverbPreset, block: Int) -> (left: [Float], right: [Float]) {
        var seed: UInt32 = 12_345
        let noise: [Float] = (0..<480).map { _ in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: seed) >> 8) / Float(1 << 23) * 0.5
        }
        let engine = makeEngine(
            samples: [noise], keys: [KeySettings(note: 60, sampleIndex: 0)],
            reverb: ReverbSettings(preset: preset, mix: 1)
        ) { config in
            config.maxBlockFrames = max(block, 16)
        }
        engine.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
        return renderStereo(engine, 144_000, block: block)
    }

    /// Every block length gives the 64-frame render bit for bit: the reverb's chunks follow the
    /// blocks, but each frame of its recursions is the same sum whichever chunk it falls in (the
    /// lines' last outputs are carried in front of each chunk), and one voice's mix does not
    /// depend on the split either.
    @Test(arguments: [1, 2, 3, 5, 7, 63, 65, 100, 1_000, 4_096])
    func anyBlockIsTheSameRoom(block: Int) {
        let reference = burst(.hall, block: 64), split = burst(.hall, block: block)
        let peak = max(reference.left.map(abs).max()!, reference.right.map(abs).max()!)
        #expect(split.left.map(\.bitPattern) == reference.left.map(\.bitPattern))
        #expect(split.right.map(\.bitPattern) == reference.right.map(\.bitPattern))
        #expect(peak > 0.01)
        // The tail is there in both, to the end of the 3 s.
        #expect(split.left[143_000...].contains { $0 != 0 })
    }

    /// The room's design is in seconds and hertz: the network's delays scale with the rate and
    /// its damping is set at 4 kHz, so a tone burst's decay (T30) in the room is the same at
    /// every rate from 22.05 to 192 kHz, at 1 kHz and at 4 kHz, for every preset. (An impulse
    /// would not do: at 192 kHz it has four times the bandwidth, and the damping takes its
    /// highest octaves away fast.)
    @Test(arguments: [22_050, 44_100, 96_000, 192_000])
    func theDecayHoldsAtEveryRate(rate: Int) {
        for preset in [ReverbPreset.room, .hall, .church] {
            for hertz in [1_000.0, 4_000.0] {
                let at48 = burstT30(preset, hertz: hertz, rate: 48_000),
                    here = burstT30(preset, hertz: hertz, rate: rate)
                print("\(preset) at \(rate) Hz, \(Int(hertz)) Hz burst: T30 \(here) s (48 kHz: \(at48) s)")
                #expect(abs(here - at48) <= 0.03 * at48)
            }
        }
    }

    /// T30 of 10 ms of a `hertz` sine under a Hann window, in the room at mix 1, at `rate`.
    func burstT30(_ preset: ReverbPreset, hertz: Double, rate: Int) -> Double {
        let length = rate / 100
        let burst: [Float] = (0..<length).map { (i: Int) -> Float in
            let t = Double(i) / Double(rate), w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(length))
            return Float(w * sin(2 * Double.pi * hertz * t))
        }
        let engine = makeEngine(
            samples: [burst], keys: [KeySettings(note: 60, sampleIndex: 0)],
            reverb: ReverbSettings(preset: preset, mix: 1)
        ) { $0.sampleRate = rate }
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let seconds: [ReverbPreset: Double] = [.room: 2, .hall: 4, .church: 8]
        let (left, right) = renderStereo(engine, Int(seconds[preset]! * Double(rate)), block: 1_024)
        return schroederT30(left, right, rate: rate)
    }
}

/// All sound off (CC120, and so SIGTERM's fade) silences the room's tail too: over the same
/// 5 ms as the bells, without a click, then digital zero.
@Suite struct RoomSilenced {
    @Test func allSoundOffFadesTheTailToZero() {
        let wave: [Float] = (0..<4_800).map { Float(sin(Double($0) * 0.05)) * 0.5 }
        let engine = makeEngine(
            samples: [wave], keys: [KeySettings(note: 60, sampleIndex: 0)],
            reverb: ReverbSettings(preset: .church, mix: 0.5))
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        engine.enqueue(.control(frame: 24_000, controller: 120, value: 0))
        let first = render(engine, 24_000)
        let quietDuringTail = engine.roomIsQuiet.load(ordering: .relaxed)
        #expect(!quietDuringTail)
        let out = first + render(engine, 24_000)
        #expect(out[23_999] != 0) // the church rings on after the bell
        #expect(out[(24_000 + 240 + 64)...].allSatisfy { $0 == 0 })
        var steps: Float = 0
        for j in 24_000..<24_300 { steps = max(steps, abs(out[j] - out[j - 1])) }
        var before: Float = 0
        for j in 23_700..<24_000 { before = max(before, abs(out[j] - out[j - 1])) }
        #expect(steps <= before * 1.5 + 1e-6, "steps \(steps) while fading, \(before) before")
        let quietAfter = engine.roomIsQuiet.load(ordering: .relaxed)
        #expect(engine.isSilent() && quietAfter)
        // A strike after the fade rings in the room again, at its full level.
        engine.enqueue(.noteOn(frame: 48_000, note: 60, velocity: 127))
        let again = render(engine, 9_600)
        #expect(again[6_000] != 0)
    }
}

/// T30 of a stereo response at `rate`: the time its Schroeder-integrated energy (both sides)
/// takes from -5 to -35 dB, times two.
func schroederT30(_ left: [Float], _ right: [Float], rate: Int) -> Double {
    var energy = [Double](repeating: 0, count: left.count + 1)
    for i in stride(from: left.count - 1, through: 0, by: -1) {
        energy[i] = energy[i + 1] + Double(left[i]) * Double(left[i]) + Double(right[i]) * Double(right[i])
    }
    let total = energy[0]
    func frame(atDecibels db: Double) -> Int {
        energy.firstIndex { 10 * log10(max($0, 1e-300) / total) <= db } ?? energy.count
    }
    return Double(frame(atDecibels: -35) - frame(atDecibels: -5)) / Double(rate) * 2
}
