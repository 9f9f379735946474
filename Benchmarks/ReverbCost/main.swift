// The reverb's cost, loud and decaying (denormals would show in the decay):
//
//   swift run -c release reverb-cost [SECONDS]        (default 10 s of audio per phase)
//
// For each preset: one bell struck every 0.25 s for SECONDS (the room loud), then the bells
// damped (50 ms) and no input while the tail decays to the gate (the room's own state only: where subnormal numbers would slow a
// CPU down). Prints the CPU time per second of audio in each phase, against the dry engine's
// under the same strikes, and the ratio decaying / loud of the reverb's own share.
import BellkeysEngine
import BellkeysLoading
import BellkeysModel
import BellkeysSystem
import Glibc

let seconds = CommandLine.arguments.count > 1 ? Double(CommandLine.arguments[1]) ?? 10 : 10
guard let plainMap = findPlainMap() else {
    print("reverb-cost: cannot find Samples/tags.json; set BELLKEYS_SAMPLES to the Samples folder")
    exit(1)
}
// The bells alone (Samples/examples/plain.json): the presets are set below.
let loaded = try loadInstrument(path: plainMap)
let rate = loaded.sampleRate
let block = 64

/// This thread's CPU time, to the nanosecond.
func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// CPU seconds per audio second: loud (strikes), and decaying (no input until the engine is silent).
func measure(_ preset: ReverbPreset) -> (loud: Double, decay: Double, decaySeconds: Double) {
    var instrument = loaded.instrument
    instrument.reverb = ReverbSettings(preset: preset, mix: 0.3)
    // Damped at note-off (over 50 ms), so the bells can be stopped without emptying the room.
    instrument.regions = instrument.regions.map {
        var bell = $0
        bell.noteOff = .damp(releaseSeconds: 0.05)
        return bell
    }
    var configuration = EngineConfiguration(sampleRate: rate, polyphony: 128)
    configuration.maxBlockFrames = block
    configuration.wideMixing = wideMixingAvailable()
    let engine = Engine(bank: loaded.bank, instrument: instrument, configuration: configuration)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: block),
        right = UnsafeMutablePointer<Float>.allocate(capacity: block)
    defer {
        left.deallocate()
        right.deallocate()
    }
    let loudFrames = Int(seconds * Double(rate))
    var frame = 0, strikes = 0
    let start = cpuSeconds()
    while frame < loudFrames {
        while strikes * rate / 4 < frame + block {
            engine.enqueue(.noteOn(frame: Int64(strikes * rate / 4), note: 60 + (strikes * 5) % 13, velocity: 100))
            strikes += 1
        }
        engine.render(left: left, right: right, frameCount: block)
        frame += block
    }
    let loud = (cpuSeconds() - start) / seconds
    // Stop the bells (note-offs: their 50 ms damping; not all sound off, which would empty the
    // room too), then measure the room's tail alone, from its full level.
    for note in 60...72 { engine.enqueue(.noteOff(frame: Int64(frame), note: note)) }
    while engine.activeVoiceCount > 0 {
        engine.render(left: left, right: right, frameCount: block)
        frame += block
    }
    let decayStart = cpuSeconds(), decayFrame = frame
    while !engine.isSilent() {
        engine.render(left: left, right: right, frameCount: block)
        frame += block
    }
    let decaySeconds = Double(frame - decayFrame) / Double(rate)
    let decay = decaySeconds > 0 ? (cpuSeconds() - decayStart) / decaySeconds : 0
    return (loud, decay, decaySeconds)
}

// Repeat the whole set so the first run's warm-up does not count; print the last.
var rows: [(ReverbPreset, (loud: Double, decay: Double, decaySeconds: Double))] = []
for _ in 0..<2 { rows = ReverbPreset.allCases.map { ($0, measure($0)) } }
let dry = rows[0].1.loud
print("reverb-cost: \(seconds) s loud per preset (one bell every 0.25 s, \(block)-frame blocks), then the tail alone")
print(
    "preset   loud: CPU s per audio s   room's share   tail: CPU s per audio s (seconds of tail)   tail / room's loud share"
)
for (preset, m) in rows.dropFirst() {
    let share = m.loud - dry
    print(
        String(preset.rawValue).padding(8)
            + "  \(format(m.loud))                \(format(share))          \(format(m.decay)) (\(format(m.decaySeconds)) s)"
            + "                       \(format(m.decay / share))")
}
print("dry      \(format(dry))")

func format(_ x: Double) -> String {
    var s = "\((x * 100_000).rounded() / 100_000)"
    while s.split(separator: ".").last.map({ $0.count < 5 }) ?? false { s += "0" }
    return s
}

extension String {
    func padding(_ n: Int) -> String { count >= n ? self : self + String(repeating: " ", count: n - count) }
}
