// In-process mixing throughput of the engine alone (no file I/O, no start-up):
//
//   swift run -c release engine-throughput [VOICES] [SECONDS] [BLOCK]
//   (default 1024 voices, 20 s of audio, 64-frame blocks)
//   TRANSPOSED=fast|good|best ...   every strike transposed (-5 to +6 semitones, never 0) at
//                                   that interpolation quality
//   TRANSPOSED=good STEREO=1 ...    the same with stereo samples (each bell on the left, the
//                                   same bell 7 frames later on the right)
//   TRANSPOSED=good MODULATED=filtered|filter|pitch|volume|all ...
//                                   the transposed strikes through a two-pole low-pass at 2 kHz
//                                   (filtered: still), moved by a modulation envelope (filter:
//                                   2 octaves, decaying in 1 s to 0.3), or with a vibrato (pitch:
//                                   5 Hz, 50 cents, and the envelope on the pitch, 100 cents), or
//                                   a tremolo (volume: 5.6 Hz, 3 dB), or all three (all), each
//                                   through the filter; or (ready) unfiltered, with a vibrato
//                                   of depth 0 that CC1 and channel pressure would deepen (a
//                                   SoundFont voice's default modulators), neither moving
//   TRANSPOSED=good MODULATED=filter|pitch|volume|all RULES=sfz ...
//                                   the same modulation by sfizz's rules, as an SFZ region's
//                                   pitcheg, fileg and LFOs have it (16-frame ticks, the
//                                   envelope stepped frame by frame, the LFOs sines)
//   ROOM=room|hall|church ...       the bells in that room (at its default mix)
//   TRANSPOSED=good ROOM=hall SENT=0.5 ...
//                                   each transposed region with a send of its own (a SoundFont
//                                   zone's), added to CC91's
//
// Loads the bundled bells as Samples/examples/plain.json has them (centred, dry, one timbre),
// keeps VOICES bells sounding (a new strike every (mean bell length) / VOICES, every bell rings
// its full length, 8.3 to 12.6 s), renders SECONDS of audio in 64-frame blocks as the render
// thread would, and prints CPU time and voices per core in real time = voices × audio s / CPU s.
import BellkeysEngine
import BellkeysLoading
import BellkeysModel
import BellkeysSystem
import Glibc

let arguments = CommandLine.arguments
let voices = arguments.count > 1 ? Int(arguments[1]) ?? 1024 : 1024
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 20 : 20
let block = arguments.count > 3 ? Int(arguments[3]) ?? 64 : 64
guard let plainMap = findPlainMap() else {
    print("engine-throughput: cannot find Samples/tags.json; set BELLKEYS_SAMPLES to the Samples folder")
    exit(1)
}
let loaded = try loadInstrument(path: plainMap)
var instrument = loaded.instrument
instrument.regions = instrument.regions.map {
    var bell = $0
    bell.noteOff = .ring
    return bell
}
let rate = loaded.sampleRate
let environment = { (name: String) -> String? in getenv(name).map { String(cString: $0) } }
let transposed = environment("TRANSPOSED").flatMap(InterpolationQuality.init(rawValue:))
let stereo = environment("STEREO") == "1"
let modulated = environment("MODULATED")
if let modulated, !["filtered", "filter", "pitch", "volume", "all", "ready"].contains(modulated) || transposed == nil {
    print("engine-throughput: MODULATED is filtered, filter, pitch, volume, all or ready, with TRANSPOSED")
    exit(1)
}
var bank = loaded.bank
if transposed != nil {
    // Key 60 + i plays bell i's sample (as the plain map does), but each region's centre lies
    // between -5 and +6 keys away (never 0), so no strike sounds at its sample's own pitch.
    var regions: [Region] = []
    if stereo {
        bank = SampleBank(sampleRate: rate)
        for i in 0..<loaded.bank.count {
            let left = (0..<loaded.bank.frameCount(of: i)).map { loaded.bank.value(sample: i, frame: $0) }
            let right = [Float](repeating: 0, count: 7) + left.dropLast(7)
            bank.append(left: left, right: right)
        }
    }
    for (i, bell) in instrument.bells.enumerated() {
        let note = bell.keyRange.lowerBound
        var region = Region(sampleIndex: bell.sampleIndex)
        region.keyRange = note...note
        region.velocityRange = 0...127
        let shift = [-5, -3, -1, 1, 2, 4, 6, -4, -2, 3, 5, -5, 1][i % 13]
        region.pitchKeycenter = note - shift
        if let modulated { modulate(&region, modulated) }
        region.reverbSend = environment("SENT").flatMap(Float.init) ?? 0
        regions.append(region)
    }
    instrument.regions = regions
    instrument.bellCount = 0
}
/// `region` through a low-pass, modulated as `MODULATED` asks.
func modulate(_ region: inout Region, _ kind: String) {
    if kind == "ready" {
        // A SoundFont voice as FluidSynth's defaults make it: a vibrato the mod wheel and
        // channel pressure deepen (neither moves here), no filter.
        region.modulation = VoiceModulation(vibratoLFO: ModulationLFO(delay: 0.001, frequency: 8.176))
        let linear = Modulator.linear
        region.noteModulators = NoteModulators(modulators: [
            Modulator(source: .controller(1), curve: linear, amount: 50, destination: .vibratoLFOToPitchCents),
            Modulator(source: .channelPressure, curve: linear, amount: 50, destination: .vibratoLFOToPitchCents),
        ])
        return
    }
    region.filter = .lowPass2
    region.cutoff = 2_000
    if kind == "filtered" { return }
    var modulation = VoiceModulation(envelope: ModulationEnvelope(attack: 0.005, decay: 1, sustain: 0.3))
    if kind == "filter" || kind == "all" { modulation.envelopeToCutoffCents = 2_400 }
    if kind == "pitch" || kind == "all" {
        modulation.envelopeToPitchCents = 100
        modulation.vibratoLFO = ModulationLFO(delay: 0.1, frequency: 5)
        modulation.vibratoLFOToPitchCents = 50
    }
    if kind == "volume" || kind == "all" {
        modulation.modulationLFO = ModulationLFO(frequency: 5.6)
        modulation.modulationLFOToVolumeDecibels = 3
    }
    if environment("RULES") == "sfz" {
        modulation.rules = .sfz
        modulation.vibratoLFO.wave = .sine
        modulation.modulationLFO.wave = .sine
    }
    region.modulation = modulation
}

if let room = environment("ROOM").flatMap(ReverbPreset.init(rawValue:)) {
    instrument.reverb = ReverbSettings(preset: room)
}
var configuration = EngineConfiguration(sampleRate: rate, polyphony: voices * 2)
configuration.interpolation = transposed ?? .standard
configuration.eventCapacity = 1 << 16
configuration.maxBlockFrames = block
configuration.wideMixing = wideMixingAvailable() // BELLKEYS_MIX=portable: not the AVX2 loop
let engine = Engine(bank: bank, instrument: instrument, configuration: configuration)

/// Strikes a new bell every `stepFrames` and renders blocks of `block` frames, as the render thread would.
struct Driver {
    let engine: Engine
    let stepFrames: Double
    let output = UnsafeMutablePointer<Float>.allocate(capacity: block)
    var nextStrike = 0.0, strikes = 0, frame = 0

    mutating func renderBlock() {
        while nextStrike < Double(frame + block) {
            engine.enqueue(
                .noteOn(
                    frame: Int64(nextStrike), note: 60 + (strikes * 5) % 13,
                    velocity: 64 + (strikes * 7) % 64))
            strikes += 1
            nextStrike += stepFrames
        }
        engine.render(into: output, frameCount: block)
        frame += block
    }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

let lengths = bank.frameCounts
var driver = Driver(engine: engine, stepFrames: Double(lengths.reduce(0, +)) / Double(lengths.count) / Double(voices))
let totalFrames = Int(seconds * Double(rate))
let warmUp = lengths.max()!
while driver.frame < warmUp { driver.renderBlock() } // warm up to the steady state
let start = cpuSeconds()
var voiceBlocks = 0, blocks = 0
while driver.frame < warmUp + totalFrames {
    driver.renderBlock()
    voiceBlocks += engine.activeVoiceCount
    blocks += 1
}
let elapsed = cpuSeconds() - start
let averageVoices = Double(voiceBlocks) / Double(blocks)
let speed = seconds / elapsed
print(
    "block \(block) | voices \(Int(averageVoices.rounded())) | audio \(seconds) s | CPU \((elapsed * 1000).rounded() / 1000) s | "
        + "audio s per CPU s \((speed * 10).rounded() / 10) | voices per core in real time \(Int((averageVoices * speed).rounded()))"
)
