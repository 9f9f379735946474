// Generates Samples/: 13 church-bell samples C4..C5, the default map tags.json, and demo.mid.
//
//   swift run make-bells [OUTPUT-FOLDER]      (default: Samples)
//
// How a bell is made (see docs/sound.md, "How the bells were made"):
// - Partials of a true-harmonic ("Simpson-tuned") church bell, as ratios to the strike note:
//   hum 1/2, prime 1, tierce 6/5 (minor third), quint 3/2, nominal 2, deciem 5/2, undeciem 8/3,
//   upper quint 3, upper octave 4, and two faint higher partials. The nominal is tuned one octave
//   above the key: the strike note a listener hears is a virtual pitch one octave below the
//   nominal, so the bell sounds at the key's pitch, with hum and prime reinforcing it.
// - Each partial is a doublet (two components a fraction of a hertz apart) for the slow
//   warble of a real bell; higher partials die faster, the hum rings longest.
// - The strike: a 15 ms burst of high inharmonic partials, starting at full level on frame 0.
// - Levels: every bell gets the same A-weighted energy over its first second (computed
//   exactly from the partial list); then one common gain puts the loudest peak at -6 dBFS.
// - Each bell rings until its sound has fallen 60 dB below the strike (the RMS of the partial
//   list, computed exactly), rounded up to 0.1 s: 12.6 s for C4 down to 8.3 s for C5, as a
//   smaller bell rings shorter. The last second is faded by a raised cosine to exactly zero
//   (from about -55 dB: nothing audible is cut). 16-bit WAV with deterministic TPDF dither,
//   48 kHz mono. (Until 0.3.0 every bell was cut at 6 s, C4 still at -27 dB when its fade began.)
import BellkeysAudio
import BellkeysFormats
import Glibc

let sampleRate = 48_000
let fadeSeconds = 1.0
/// How far the ring falls before a bell ends, in dB.
let ringDecibels = 60.0
let targetPeak = 0.5 // -6 dBFS
let folder = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "Samples"

struct Partial {
    var ratio: Double // to the strike note (the key)
    var amplitude: Double
    var decaySeconds: Double // amplitude falls by e in this time (for the lowest bell)
    var phase: Double
}

let partials: [Partial] = [
    Partial(ratio: 0.5, amplitude: 0.35, decaySeconds: 2.2, phase: 0.3), // hum
    Partial(ratio: 1.0, amplitude: 0.50, decaySeconds: 1.9, phase: 1.1), // prime (fundamental)
    Partial(ratio: 1.2, amplitude: 0.45, decaySeconds: 1.6, phase: 2.0), // tierce, minor third
    Partial(ratio: 1.5, amplitude: 0.18, decaySeconds: 1.1, phase: 0.7), // quint
    Partial(ratio: 2.0, amplitude: 1.00, decaySeconds: 1.4, phase: 2.6), // nominal: strike pitch an octave below
    Partial(ratio: 2.5, amplitude: 0.32, decaySeconds: 0.75, phase: 1.7), // deciem
    Partial(ratio: 2.667, amplitude: 0.14, decaySeconds: 0.6, phase: 0.2), // undeciem
    Partial(ratio: 3.0, amplitude: 0.26, decaySeconds: 0.5, phase: 2.9), // upper quint (superquint)
    Partial(ratio: 4.0, amplitude: 0.20, decaySeconds: 0.38, phase: 1.4), // upper octave (octave nominal)
    Partial(ratio: 5.02, amplitude: 0.09, decaySeconds: 0.25, phase: 0.9),
    Partial(ratio: 6.05, amplitude: 0.05, decaySeconds: 0.18, phase: 2.2),
]
/// Doublet: a second component this many hertz above, at this relative level.
let doubletHertz = 0.9, doubletLevel = 0.35

func frequency(note: Int) -> Double { 440 * pow(2, Double(note - 69) / 12) }

/// Higher bells are smaller and ring shorter: decay scales with (C4 / f)^0.6.
func decay(_ p: Partial, note: Int) -> Double { p.decaySeconds * pow(frequency(note: 60) / frequency(note: note), 0.6) }

/// A-weighting as linear gain (IEC 61672), for level matching.
func aWeighting(_ f: Double) -> Double {
    let f2 = f * f
    let num = pow(12_194, 2) * f2 * f2
    let den = (f2 + pow(20.6, 2)) * sqrt((f2 + pow(107.7, 2)) * (f2 + pow(737.9, 2))) * (f2 + pow(12_194, 2))
    return num / den * pow(10, 2.0 / 20)
}

/// Strike: inharmonic high partials, decaying in a few milliseconds (deterministic).
let strike: [(ratio: Double, amplitude: Double, decay: Double, phase: Double)] = [
    (7.13, 0.10, 0.012, 0.4), (8.41, 0.08, 0.010, 1.9), (9.97, 0.07, 0.008, 2.7),
    (11.6, 0.05, 0.007, 0.8), (13.9, 0.04, 0.006, 2.3), (16.3, 0.03, 0.005, 1.2),
]

/// The bell's RMS level at `t` seconds (the partials and their doublets; the strike has died
/// away in milliseconds).
func level(note: Int, at t: Double) -> Double {
    var power = 0.0
    for p in partials {
        let a = p.amplitude * exp(-t / decay(p, note: note))
        power += 0.5 * a * a * (1 + doubletLevel * doubletLevel)
    }
    return power.squareRoot()
}

/// How long the bell rings: until its level is `ringDecibels` under the strike's, in 0.1 s steps.
func ringSeconds(note: Int) -> Double {
    let floor = level(note: note, at: 0) * pow(10, -ringDecibels / 20)
    var tenths = 10
    while level(note: note, at: Double(tenths) / 10) > floor { tenths += 1 }
    return Double(tenths) / 10
}

func bell(note: Int) -> [Double] {
    let frameCount = Int((ringSeconds(note: note) * Double(sampleRate)).rounded())
    let f0 = frequency(note: note)
    let nyquist = Double(sampleRate) / 2
    var out = [Double](repeating: 0, count: frameCount)
    let w = 2 * Double.pi / Double(sampleRate)
    for p in partials where p.ratio * f0 < nyquist * 0.9 {
        let tau = decay(p, note: note)
        let f = p.ratio * f0
        for i in 0..<frameCount {
            let t = Double(i) / Double(sampleRate)
            let env = exp(-t / tau)
            out[i] +=
                p.amplitude * env
                * (sin(w * f * Double(i) + p.phase)
                    + doubletLevel * sin(w * (f + doubletHertz) * Double(i) + p.phase + 1))
        }
    }
    for s in strike where s.ratio * f0 < nyquist * 0.9 {
        let f = s.ratio * f0
        for i in 0..<Int(0.1 * Double(sampleRate)) {
            let t = Double(i) / Double(sampleRate)
            out[i] += s.amplitude * exp(-t / s.decay) * sin(w * f * Double(i) + s.phase)
        }
    }
    // Raised-cosine fade over the last second, ending exactly at zero.
    let fadeFrames = Int(fadeSeconds * Double(sampleRate))
    for k in 0..<fadeFrames {
        let x = Double(k + 1) / Double(fadeFrames)
        out[frameCount - fadeFrames + k] *= 0.5 * (1 + cos(Double.pi * x))
    }
    return out
}

/// A-weighted energy of the first second, exactly from the partial list (doublets and strike
/// are included; cross terms between different frequencies average out).
func weightedEnergy(note: Int) -> Double {
    let f0 = frequency(note: note)
    var energy = 0.0
    for p in partials {
        let tau = decay(p, note: note)
        let envelopeEnergy = tau / 2 * (1 - exp(-2 / tau)) // ∫0..1 e^(-2t/τ) dt
        let a = aWeighting(p.ratio * f0)
        energy += 0.5 * p.amplitude * p.amplitude * (1 + doubletLevel * doubletLevel) * envelopeEnergy * a * a
    }
    return energy
}

let names = ["C", "Cs", "D", "Ds", "E", "F", "Fs", "G", "Gs", "A", "As", "B"]
func fileName(note: Int) -> String { "bell-\(names[note % 12])\(note / 12 - 1).wav" }

mkdir(folder, 0o755)
let reference = weightedEnergy(note: 60)
var bells: [[Double]] = []
for note in 60...72 {
    let gain = sqrt(reference / weightedEnergy(note: note))
    bells.append(bell(note: note).map { $0 * gain })
}
let peak = bells.map { $0.map(abs).max()! }.max()!
/// Deterministic uniform numbers in 0..<1 (a 64-bit LCG), so the samples are reproducible.
struct Dither {
    var seed: UInt64 = 0x6265_6C6C_6B65_7973 // "bellkeys"
    mutating func uniform() -> Double {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(seed >> 11) / Double(1 << 53)
    }
}
var dither = Dither()
for (i, note) in (60...72).enumerated() {
    // TPDF dither of ±1 LSB, then exact 16-bit values (libsndfile scales floats by 32767).
    var frames: [Float] = []
    for x in bells[i] {
        let scaled = x * targetPeak / peak * 32_767 + (dither.uniform() - dither.uniform())
        frames.append(Float(max(-32_767, min(32_767, scaled.rounded())) / 32_767))
    }
    let path = folder + "/" + fileName(note: note)
    do {
        let writer = try SoundFileWriter(path: path, sampleRate: sampleRate, channelCount: 1, format: .s16)
        try frames.withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
    } catch {
        print("make-bells: \(error)")
        exit(1)
    }
    print(
        "\(path): \(noteName(note)), \(String(format3(frequency(note: note)))) Hz strike note, peak \(format3(Double(frames.map(abs).max()!)))"
    )
}

func format3(_ x: Double) -> String { "\((x * 1000).rounded() / 1000)" }

// The default map: the tutorial's button tags 100..112.
var json = """
    {
      "comment": "The 13 bells of the original tutorial: button tags 100 (C4) to 112 (C5), on a handbell table from left to right, in a hall; a harder strike is brighter; every other key of a keyboard rings the bell of its name, an octave or more away. Generated by Tools/make-bells.",
      "masterVolumeDecibels": 0,
      "velocityCurve": "square",
      "polyphony": 128,
      "unmappedNotes": "fold",
      "noteOff": "damp",
      "releaseSeconds": 0.4,
      "reverb": "hall",
      "reverbMix": 0.3,
      "velocityTimbre": 1,
      "keys": [

    """
// A handbell table seen from the audience: C4 on the left (pan -0.6) to C5 on the right (0.6),
// a tenth apart, never hard to one side.
for (i, note) in (60...72).enumerated() {
    let comma = i < 12 ? "," : ""
    let pan = Double(i - 6) / 10
    json += "    { \"tag\": \(100 + i), \"sample\": \"\(fileName(note: note))\", \"pan\": \(pan) }\(comma)\n"
}
json += "  ]\n}\n"
let mapPath = folder + "/tags.json"
guard let file = fopen(mapPath, "w") else {
    print("make-bells: cannot write \(mapPath)")
    exit(1)
}
fputs(json, file)
fclose(file)
print(mapPath)

// demo.mid: the tune `bellkeys demo` plays (BellkeysFormats/DemoTune.swift).
let demo = westminsterQuartersFile()
let demoPath = folder + "/demo.mid"
guard let midiFile = fopen(demoPath, "wb") else {
    print("make-bells: cannot write \(demoPath)")
    exit(1)
}
fwrite(demo, 1, demo.count, midiFile)
fclose(midiFile)
print(demoPath)
