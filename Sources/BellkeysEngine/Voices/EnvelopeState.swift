import BellkeysModel

// The amplitude envelope on the render thread: a voice's gain as a chain of linear pieces
// (`Ramp`s). Delay, attack and hold are one piece each; decay and release, linear in decibels,
// are pieces of `pieceFrames` frames whose ends lie exactly on the curve, counted from the
// start of the stage, so where output blocks split a voice never changes its gains.

/// A region's envelope in frames, as the render thread reads it.
struct EnvelopeFrames {
    var delay = 0
    var attack = 0
    var hold = 0
    /// Frames from full level down to `sustain` (0: straight to the sustain level).
    var decay = 0
    var sustain: Float = 1
    /// log₂ of the gain change per frame while decaying and releasing (negative).
    var decayRate = 0.0
    var releaseRate = 0.0

    /// The level at which a release (or a decay to silence) ends: −90 dB.
    static let floor = 3.162_277_660_168_379_4e-5
    static let floorLog2 = -14.948_676_426_993_24

    init() {}

    init(_ envelope: Envelope, sampleRate: Int) {
        let rate = Double(sampleRate)
        func frames(_ seconds: Double) -> Int { max(0, Int((seconds * rate).rounded())) }
        delay = frames(envelope.delay)
        attack = frames(envelope.attack)
        hold = frames(envelope.hold)
        let fallLog2 = Envelope.fallDecibels / 20 * 3.321_928_094_887_362_3 // 90 dB in log₂ of gain
        decayRate = -fallLog2 / max(envelope.decay * rate, 1)
        releaseRate = -fallLog2 / max(envelope.release * rate, 1)
        sustain = Float(max(0, min(1, envelope.sustain)))
        if sustain <= 0 {
            decay = max(1, Int((EnvelopeFrames.floorLog2 / decayRate).rounded()))
        } else {
            decay = EnvelopeFrames.decayFrames(sustain, decayRate, inBlocks: envelope.decaysInBlocks)
        }
    }

    /// Frames from full level down to `sustain` (above 0) at `rate`: 0 when it is full level;
    /// to the frame the curve reaches it or, `inBlocks`, to the end of the 64-frame block it
    /// does (FluidSynth's: it clamps the block's level there, and the amplitude ramps to it
    /// over the block). Thread: any. Real-time safe.
    @_noLocks
    static func decayFrames(_ sustain: Float, _ rate: Double, inBlocks: Bool) -> Int {
        if sustain >= 1 { return 0 }
        let frames = log2Fast(Double(sustain)) / rate
        guard inBlocks else { return max(1, Int(frames + 0.5)) }
        // (Within a millionth of a block of a whole one is that one: the fall lands on it.)
        let blocks = frames / 64 - 1e-6
        return 64 * max(1, Int(blocks) + (blocks > Double(Int(blocks)) ? 1 : 0))
    }
}

/// Where a voice's envelope is.
enum EnvelopeStage: UInt8 {
    case delay, attack, hold, decay, sustain, release
    /// No envelope, or one that was cut (fade) or ended: no further pieces.
    case none

    /// Whether this is `stage` (not `==`: see `VoicePhase.is`).
    @_noLocks
    func `is`(_ stage: EnvelopeStage) -> Bool { rawValue == stage.rawValue }
}

/// A voice's envelope position. Thread: render.
struct EnvelopeState {
    var stage = EnvelopeStage.none
    /// Frames since the stage began, its length, and the level (0...1) it began at.
    var stageFrame = 0
    var stageLength = 0
    var stageLevel = 1.0
    /// Frames left in the gain piece being played (`Int.max`: the gain holds until an event).
    var pieceLeft = Int.max
    /// The strike's gain (region × velocity × the sample's storage scale), which every level
    /// is multiplied by.
    var strike: Float = 0

    /// Frames of a piece of a decay or a release.
    static let pieceFrames = 64

    @_noLocks
    init() {}
}

/// Starts an envelope: the gain at its first frame and its first piece to come. Thread: render.
@_noLocks
func startEnvelope(_ gain: inout Ramp, _ envelope: inout EnvelopeState, _ frames: EnvelopeFrames, strike: Float) {
    envelope = EnvelopeState()
    envelope.strike = strike
    gain = Ramp(0)
    envelope.stage = .delay
    envelope.stageLength = frames.delay
    envelope.stageLevel = 0
    envelope.pieceLeft = 0
}

/// Moves an envelope to its next piece (the current one is used up), setting `gain` to move
/// along it. Returns false when the envelope has ended: the voice is silent from here.
@_noLocks
func nextPiece(_ gain: inout Ramp, _ envelope: inout EnvelopeState, _ frames: EnvelopeFrames) -> Bool {
    var e = envelope
    while true {
        if e.stageFrame >= e.stageLength {
            // The stage is over: on to the next one.
            switch e.stage {
            case .delay:
                e.stage = .attack
                e.stageLength = frames.attack
                e.stageLevel = 0
            case .attack:
                e.stage = .hold
                e.stageLength = frames.hold
                e.stageLevel = 1
            case .hold:
                e.stage = .decay
                e.stageLength = frames.decay
                e.stageLevel = 1
            case .decay:
                if frames.sustain <= 0 {
                    envelope = e
                    return false
                }
                e.stage = .sustain
                e.stageLength = Int.max
                e.stageLevel = Double(frames.sustain)
            case .sustain, .release, .none:
                envelope = e
                return false
            }
            e.stageFrame = 0
            continue
        }
        let left = e.stageLength - e.stageFrame
        switch e.stage {
        case .delay:
            gain = Ramp(0)
            e.pieceLeft = left
        case .attack:
            gain.move(to: e.strike, frames: left)
            e.pieceLeft = left
        case .hold:
            gain = Ramp(e.strike)
            e.pieceLeft = left
        case .sustain:
            gain = Ramp(e.strike * Float(e.stageLevel))
            e.pieceLeft = Int.max
        case .decay, .release:
            let decaying = e.stage.is(.decay)
            let rate = decaying ? frames.decayRate : frames.releaseRate
            let end = min(e.stageLength, (e.stageFrame / EnvelopeState.pieceFrames + 1) * EnvelopeState.pieceFrames)
            var level: Float
            if end == e.stageLength {
                level = decaying && frames.sustain > 0 ? frames.sustain : Float(EnvelopeFrames.floor)
            } else {
                level = Float(e.stageLevel * exp2Fast(rate * Double(end)))
            }
            gain.move(to: e.strike * level, frames: end - e.stageFrame)
            e.pieceLeft = end - e.stageFrame
        case .none:
            envelope = e
            return false
        }
        envelope = e
        return true
    }
}

/// Starts the release of an envelope from the level `gain` is at. Thread: render.
@_noLocks
func startRelease(_ gain: Ramp, _ envelope: inout EnvelopeState, _ frames: EnvelopeFrames) {
    guard envelope.strike > 0 else {
        envelope.stage = .none
        return
    }
    let level = Double(gain.value / envelope.strike)
    envelope.stage = .release
    envelope.stageFrame = 0
    envelope.stageLevel = level
    if level <= EnvelopeFrames.floor {
        envelope.stageLength = 0
    } else {
        let drop = EnvelopeFrames.floorLog2 - log2Fast(level) // negative
        envelope.stageLength = max(1, Int(drop / frames.releaseRate + 0.5))
    }
    envelope.pieceLeft = 0
}

extension Engine {
    /// The envelope of a voice whose note-on modulators moved its times: `t` holds its delay,
    /// attack, hold, decay and release in timecents (its region's and the modulators' summed)
    /// and its sustain in centibels, counted as FluidSynth counts a volume envelope
    /// (`fluid_voice_update_param`, `calculate_hold_decay_buffers`): each time clipped to its
    /// bounds, in whole 64-frame blocks, the delay cut down, the attack and the release cut down
    /// plus one, the hold and the decay rounded; a hold of −32,768 or less is none; decay and
    /// release fall 96 dB in their time (90 dB here, in 90/96 of it); the sustain 0.96 dB a
    /// 10 cB, within 0 to 1,000 cB. The same counts as `Envelope`'s seconds the SoundFont
    /// reader makes for a region. Thread: render. Real-time safe.
    @_noLocks
    func countedEnvelope(_ t: SIMD8<Double>) -> EnvelopeFrames {
        let rate = Double(configuration.sampleRate)
        func blocks(_ timecents: Double, _ low: Double, _ high: Double) -> Double {
            rate * exp2Fast(max(low, min(high, timecents)) / 1200) / 64
        }
        var e = EnvelopeFrames()
        e.delay = 64 * Int(blocks(t[0], -12_000, 5_000))
        e.attack = 64 * (1 + Int(blocks(t[1], -12_000, 8_000)))
        e.hold = t[2] <= -32_768 ? 0 : 64 * Int(blocks(t[2], -12_000, 5_000) + 0.5)
        // (90: `Envelope.fallDecibels`, written here as a literal: read through the model's static,
        // it is a call the real-time check cannot see into.)
        let decay = Double(64 * Int(blocks(t[3], -12_000, 8_000) + 0.5)) * (90 / 96)
        let release = Double(64 * (1 + Int(blocks(t[5], -7_200, 8_000)))) * (90 / 96)
        let fallLog2 = 90.0 / 20 * 3.321_928_094_887_362_3
        e.decayRate = -fallLog2 / max(decay, 1)
        e.releaseRate = -fallLog2 / max(release, 1)
        let centibels = max(0, min(1_000, t[4]))
        e.sustain = Float(exp2Fast(-0.096 * centibels / 20 * 3.321_928_094_887_362_3))
        e.decay = EnvelopeFrames.decayFrames(e.sustain, e.decayRate, inBlocks: true)
        return e
    }
}

/// 2^x, to about 1e-13 relative, for the render thread (no Foundation, no calls out).
@_noLocks
func exp2Fast(_ x: Double) -> Double {
    if x < -1000 { return 0 }
    if x > 1000 { return .infinity }
    var whole = Int(x)
    if Double(whole) > x { whole -= 1 }
    let y = (x - Double(whole)) * 0.693_147_180_559_945_3
    var term = 1.0, sum = 1.0
    var n = 1.0
    while n < 18 {
        term *= y / n
        sum += term
        n += 1
    }
    return Double(sign: .plus, exponent: whole, significand: sum)
}

/// log₂ x for x > 0, to about 1e-14, for the render thread.
@_noLocks
func log2Fast(_ x: Double) -> Double {
    let exponent = x.exponent
    let m = x.significand // 1 ..< 2
    // ln m = 2 atanh(z), z = (m - 1) / (m + 1) ≤ 1/3.
    let z = (m - 1) / (m + 1), z2 = z * z
    var term = z, sum = 0.0
    var k = 1.0
    while k < 60 {
        sum += term / k
        term *= z2
        k += 2
    }
    return Double(exponent) + 2 * sum * 1.442_695_040_888_963_4
}

/// log₂ x on the control thread.
func log2(_ x: Double) -> Double { log2Fast(x) }
