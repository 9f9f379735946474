// Pitched voices: a region's sample read at a ratio through a windowed-sinc kernel (or, at its
// own pitch, frame by frame), mono or stereo, looped or not, then through its envelope's gain
// into the channel's buses. For `Engine.renderSegment` (SegmentMix.swift). The kernel loop
// itself is in PitchLoops.swift.
#if arch(x86_64)
import BellkeysWideMix
#endif

/// How a pitched voice's sample repeats, as the render thread reads it.
enum VoiceLoop: UInt8 {
    case none, oneShot, continuous, sustain

    @_noLocks
    func `is`(_ other: VoiceLoop) -> Bool { rawValue == other.rawValue }
}

/// Frames of a loop's seam copied out at once (`seamWindow`): twice the widest kernel (256
/// taps) and 256 more; zeros before them, as many as `samplePadding`; and the values the
/// buffer holds, stereo at most. (Computed, not stored: the render thread may not start a
/// global's lazy initialisation. `Engine.init` checks them against the kernels.)
var seamFrames: Int { 768 }
var seamPadding: Int { 128 }
var seamCapacity: Int { 2 * (seamFrames + 2 * seamPadding) }

/// Reads up to `m` frames of `voice` at its ratio into `left` (and, for a stereo sample,
/// `right`), advancing its position; returns how many it read (fewer than `m` when the sample
/// ended). With `wide`, through the AVX2 build of the interpolation loop (PitchLoops.swift).
/// Thread: render. Real-time safe.
@_noLocks
func resample(
    _ voice: inout PitchedVoice, frames: UnsafePointer<Int16>, frameCount: Int,
    kernels: UnsafePointer<KernelLevel>, wide: Bool, left: UnsafeMutablePointer<Float>,
    right: UnsafeMutablePointer<Float>, count m: Int, seam: UnsafeMutablePointer<Int16>
) -> Int {
    var produced = 0
    let increment = voice.increment
    let unity = voice.kernel < 0
    let taps = unity ? 1 : kernels[Int(voice.kernel)].taps
    let coefficients = kernels[unity ? 0 : Int(voice.kernel)].coefficients
    let reach = unity ? 0 : taps / 2 // taps to the right of the frame
    let back = unity ? 0 : taps / 2 - 1 // and to its left
    let stereo = voice.isStereo
    while produced < m {
        let looping = voice.looping
        var position = Int(voice.phaseFrames >> 32)
        if looping, position > voice.loopEnd {
            let length = voice.loopEnd - voice.loopStart + 1
            voice.phaseFrames -= UInt64((position - voice.loopEnd - 1) / length * length + length) << 32
            position = Int(voice.phaseFrames >> 32)
            voice.wrapped = true
        }
        if !looping, position >= frameCount { return produced }
        // Frames whose taps all lie inside the sample (or its padding), clear of the loop's end.
        let last = looping ? voice.loopEnd - reach : frameCount - 1
        var count = 0
        // (Once the loop has come round, taps left of its start are read from its end.)
        let clear = !looping || !voice.wrapped || position - back >= voice.loopStart
        if clear, position <= last {
            let ceiling = UInt64(last + 1) << 32
            count = min(m - produced, Int((ceiling - voice.phaseFrames + increment - 1) / increment))
        }
        if count == 0, unity {
            // A frame at the loop's seam, at the sample's own pitch: read where it wraps to.
            readAcrossLoop(
                &voice, frames: frames, coefficients: coefficients, taps: taps, left: left + produced,
                right: right + produced)
            voice.phaseFrames &+= increment
            produced += 1
            continue
        }
        if count == 0 {
            // Frames whose taps cross the loop's seam: the seam is copied out unrolled (past
            // its end from its start, and once it has come round, before its start from its
            // end), and as many frames as its copy holds go through the same kernel loop.
            let first = position - back
            let window = seamWindow(&voice, frames: frames, from: first, taps: taps, into: seam)
            var ceiling = UInt64(first + window - reach) << 32
            // Before the loop first comes round, a copy holds what lies before the loop's start
            // as it is; after, as the loop's end: a run stops at the first wrap.
            if !voice.wrapped { ceiling = min(ceiling, UInt64(voice.loopEnd + 1) << 32) }
            let run = min(m - produced, Int((ceiling - voice.phaseFrames + increment - 1) / increment))
            // (The kernel loop reads the copy at positions from `first`: its phase is moved there.)
            let shift = UInt64(bitPattern: Int64(first)) << 32
            let copy = UnsafePointer(seam + (stereo ? 2 : 1) * seamPadding)
            voice.phaseFrames =
                interpolate(
                    wide: wide, copy, channels: stereo ? 2 : 1, phase: voice.phaseFrames &- shift,
                    increment: increment, level: kernels[Int(voice.kernel)], left: left + produced,
                    right: right + produced, count: run) &+ shift
            produced += run
            continue
        }
        if unity {
            let start = frames + (stereo ? 2 * position : position)
            if stereo {
                for j in 0..<count {
                    left[produced + j] = Float(start[2 * j])
                    right[produced + j] = Float(start[2 * j + 1])
                }
            } else {
                for j in 0..<count { left[produced + j] = Float(start[j]) }
            }
            voice.phaseFrames &+= UInt64(count) << 32
        } else {
            voice.phaseFrames = interpolate(
                wide: wide, frames, channels: stereo ? 2 : 1, phase: voice.phaseFrames, increment: increment,
                level: kernels[Int(voice.kernel)], left: left + produced, right: right + produced, count: count)
        }
        produced += count
    }
    return produced
}

/// Copies the frames of a looped voice from `first` on into `seam` (after `seamPadding`
/// frames), as the voice reads them: past the loop's end from its start, and once the loop has
/// come round, before its start from its end. As many as reach past the seam by the kernel's
/// `taps` and 64 frames more, at most `seamFrames`; returns how many. Thread: render.
/// Real-time safe.
@_noLocks
func seamWindow(
    _ voice: inout PitchedVoice, frames: UnsafePointer<Int16>, from first: Int, taps: Int,
    into seam: UnsafeMutablePointer<Int16>
) -> Int {
    let length = voice.loopEnd - voice.loopStart + 1
    let count = max(taps + 1, min(seamFrames, voice.loopEnd + 1 + taps + 64 - first))
    let stereo = voice.isStereo
    let out = seam + (stereo ? 2 : 1) * seamPadding
    for i in 0..<count {
        var q = first + i
        if q > voice.loopEnd {
            q = voice.loopStart + (q - voice.loopStart) % length
        } else if voice.wrapped, q < voice.loopStart {
            q = voice.loopEnd - (voice.loopStart - 1 - q) % length
        }
        if stereo {
            out[2 * i] = frames[2 * q]
            out[2 * i + 1] = frames[2 * q + 1]
        } else {
            out[i] = frames[q]
        }
    }
    return count
}

/// The top 8 bits of a position's fraction pick the kernel's phase row; the next 24 weigh the
/// difference to the next row.
@_noLocks
@inline(__always)
func kernelRow(_ phase: UInt64, _ coefficients: UnsafePointer<Float>, taps: Int) -> (UnsafePointer<Float>, Float) {
    let fraction = UInt32(truncatingIfNeeded: phase)
    let row = Int(fraction >> 24)
    let weight = Float(fraction & 0xFF_FFFF) * (1 / 16_777_216)
    return (coefficients + row * 2 * taps, weight)
}

/// `interpolate` (PitchLoops.swift): the AVX2 build with `wide`, else the portable one. Both
/// give the same bits.
@_noLocks
@inline(__always)
func interpolate(
    wide: Bool, _ frames: UnsafePointer<Int16>, channels: Int, phase: UInt64, increment: UInt64,
    level: KernelLevel, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int
) -> UInt64 {
    #if arch(x86_64)
    if wide {
        return BellkeysWideMix.interpolate(
            frames, channels: channels, phase: phase, increment: increment, coefficients: level.coefficients,
            taps: level.taps, left: left, right: right, count: count, workspace: level.workspace)
    }
    #endif
    return BellkeysEngine.interpolate(
        frames, channels: channels, phase: phase, increment: increment, coefficients: level.coefficients,
        taps: level.taps, left: left, right: right, count: count, workspace: level.workspace)
}

/// One frame whose kernel reaches across the loop's seam: taps past `loopEnd` are read from
/// `loopStart` on, and, once the loop has come round, taps before `loopStart` from `loopEnd`
/// back, as the loop plays them.
@_noLocks
func readAcrossLoop(
    _ voice: inout PitchedVoice, frames: UnsafePointer<Int16>, coefficients: UnsafePointer<Float>, taps: Int,
    left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
) {
    let position = Int(voice.phaseFrames >> 32)
    let length = voice.loopEnd - voice.loopStart + 1
    let stereo = voice.isStereo
    if taps == 1 {
        var index = position
        while index > voice.loopEnd { index -= length }
        left[0] = Float(frames[stereo ? 2 * index : index])
        if stereo { right[0] = Float(frames[2 * index + 1]) }
        return
    }
    let (row, w) = kernelRow(voice.phaseFrames, coefficients, taps: taps)
    var sumLeft: Float = 0, sumRight: Float = 0
    for k in 0..<taps {
        var index = position - taps / 2 + 1 + k
        if voice.looping {
            while index > voice.loopEnd { index -= length }
            if voice.wrapped { while index < voice.loopStart { index += length } }
        }
        let c = row[k] + w * row[taps + k]
        if stereo {
            sumLeft += c * Float(frames[2 * index])
            sumRight += c * Float(frames[2 * index + 1])
        } else {
            sumLeft += c * Float(frames[index])
        }
    }
    left[0] = sumLeft
    right[0] = sumRight
}

extension Engine {
    /// Mixes up to `n` frames of the pitched voice in `slot` into `left` (its channel's bus, or
    /// the left side bus) and, if given, `right` (the right side bus: panned or stereo voices)
    /// and `send` (its own send, before its pan: `addSend`), through its envelope and filter
    /// (and its modulation, tick by tick); returns true when the voice has ended. Thread: render.
    /// Real-time safe.
    @_noLocks
    func mixPitchedVoice(
        slot: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
        send: UnsafeMutablePointer<Float>?, frameCount n: Int
    ) -> Bool {
        let scratchLeft = pool.pitchScratch, scratchRight = pool.pitchScratch + configuration.maxBlockFrames
        var voice = pool.voices[slot], pitched = pool.pitchedVoices[slot]
        let region = Int(voice.region)
        var done = 0
        var ended = false
        while done < n {
            if pitched.envelope.pieceLeft == 0 {
                let frames = pitched.ownsEnvelope ? pool.voiceEnvelopes[slot] : table.regions[region].envelope
                if !nextPiece(&voice.gain, &pitched.envelope, frames) {
                    ended = true
                    break
                }
            }
            var m = min(n - done, pitched.envelope.pieceLeft)
            if pitched.holdsInDelay, pitched.envelope.stage.is(.delay) {
                // Nothing read in the delay: the sample starts as the attack does.
                holdInDelay(slot: slot, region: region, &pitched, gain: voice.gain.target, frameCount: m)
                voice.gain.advance(by: m)
                done += m
                continue
            }
            if pitched.isModulated, !pool.modulatedVoices[slot].idle {
                if pool.modulatedVoices[slot].tickLeft == 0 {
                    tickModulation(slot: slot, region: region, &pitched, gain: voice.gain.target)
                }
                // The pitch holds within a tick: read no further than its end. (A voice whose
                // pitch stays reads on; its filter and tremolo take later ticks as they come.)
                if pool.modulatedVoices[slot].movesPitch { m = min(m, pool.modulatedVoices[slot].tickLeft) }
            }
            let got = resample(
                &pitched, frames: voice.frames, frameCount: voice.frameCount, kernels: table.kernelLevels,
                wide: wideMixing,
                left: scratchLeft, right: scratchRight, count: m, seam: pool.seamScratch)
            if pitched.isModulated, !pool.modulatedVoices[slot].idle {
                shapeModulatedVoice(
                    slot: slot, region: region, &pitched, gain: voice.gain.target, scratchLeft, scratchRight,
                    frameCount: got)
            } else if pitched.filterKind != 0 {
                // (An idle modulated voice's too: `ModulatedVoice.idle`.)
                filterVoice(&pitched, scratchLeft, scratchRight, frameCount: got)
            }
            var rightFromDone: UnsafeMutablePointer<Float>?
            if let right { rightFromDone = right + done }
            addVoice(
                voice, stereo: pitched.isStereo, scratchLeft, scratchRight, left: left + done, right: rightFromDone,
                frameCount: got)
            if let send {
                addSend(
                    voice.gain, table.regions[region].reverbSend, stereo: pitched.isStereo, scratchLeft, scratchRight,
                    into: send + done, frameCount: got)
            }
            voice.gain.advance(by: got)
            if pitched.envelope.pieceLeft != Int.max { pitched.envelope.pieceLeft -= got }
            pitched.envelope.stageFrame += got
            done += got
            if got < m {
                ended = true
                break
            }
            if !voice.phase.is(.sounding), voice.gain.framesLeft == 0, voice.gain.value == 0 {
                ended = true
                break
            }
        }
        // Where its next segment reads from, for the render loop's prefetch of the voices ahead
        // (SegmentMix.swift), which reads `position` (a pitched voice's place is `phaseFrames`).
        voice.position = (Int(pitched.phaseFrames >> 32) - 16) * (pitched.isStereo ? 2 : 1)
        pool.voices[slot] = voice
        pool.pitchedVoices[slot] = pitched
        return ended
    }
}

/// Adds `n` read frames × `ramp` × `send` into `bus`, before the voice's pan, as FluidSynth
/// feeds its reverb from a voice's mono signal: a stereo voice's two sides (each a voice
/// there, at full level on its side) summed at 1/√2, so that a centred mono voice and a stereo
/// pair send in the proportion FluidSynth's do. A stereo voice's left frames become the sum
/// (its frames are read no more). Not inlined: the voices that send are few, and inlined its
/// loops cost every pitched voice's mix instructions.
@_noLocks
@inline(never)
func addSend(
    _ ramp: Ramp, _ send: Float, stereo: Bool, _ sourceLeft: UnsafeMutablePointer<Float>,
    _ sourceRight: UnsafeMutablePointer<Float>, into bus: UnsafeMutablePointer<Float>, frameCount n: Int
) {
    if stereo { for j in 0..<n { sourceLeft[j] += sourceRight[j] } }
    addScaled(sourceLeft, into: bus, ramp: ramp, scale: stereo ? send * 0.707_106_77 : send, frameCount: n)
}

/// Adds `n` frames of `source` × `ramp` × `scale` into `bus`. A moving gain is taken at each
/// frame from where that frame lies in the move (`target - step × frames left`, as
/// `Ramp.advance` does), not counted on from the segment's start, so it is the same however
/// segments cut the move.
@_noLocks
@inline(__always)
func addScaled(
    _ source: UnsafeMutablePointer<Float>, into bus: UnsafeMutablePointer<Float>, ramp: Ramp, scale: Float,
    frameCount n: Int
) {
    if ramp.framesLeft == 0 {
        let g = ramp.value * scale
        for j in 0..<n { bus[j] += source[j] * g }
    } else {
        let moving = min(n, ramp.framesLeft)
        let target = ramp.target, step = ramp.step, framesLeft = ramp.framesLeft
        for j in 0..<moving { bus[j] += source[j] * ((target - step * Float(framesLeft - j)) * scale) }
        for j in moving..<n { bus[j] += source[j] * (target * scale) }
    }
}

/// Adds `n` read frames of `voice` × its gain ramp into its buses: a mono voice into `left`
/// alone, or into both sides with its pan gains; a stereo one side to side with its balance.
@_noLocks
@inline(__always)
func addVoice(
    _ voice: Voice, stereo: Bool, _ sourceLeft: UnsafeMutablePointer<Float>, _ sourceRight: UnsafeMutablePointer<Float>,
    left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount n: Int
) {
    let ramp = voice.gain
    let gl = voice.leftGain, gr = voice.rightGain
    guard let right else {
        addScaled(sourceLeft, into: left, ramp: ramp, scale: 1, frameCount: n)
        return
    }
    // A moving gain is taken at each frame from where that frame lies in the move (as in
    // `addScaled`).
    let still = ramp.framesLeft == 0
    let moving = min(n, ramp.framesLeft)
    let target = ramp.target, step = ramp.step, framesLeft = ramp.framesLeft
    let otherSide = stereo ? sourceRight : sourceLeft
    if still {
        let hl = ramp.value * gl, hr = ramp.value * gr
        for j in 0..<n {
            left[j] += sourceLeft[j] * hl
            right[j] += otherSide[j] * hr
        }
    } else {
        for j in 0..<n {
            let g = j < moving ? target - step * Float(framesLeft - j) : target
            left[j] += sourceLeft[j] * (g * gl)
            right[j] += otherSide[j] * (g * gr)
        }
    }
}
