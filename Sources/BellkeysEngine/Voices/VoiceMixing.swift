// One voice at a time into its buses: the voices the four-voice loops do not take (a gain still
// ramping, a sample ending within the segment, a start inside it) and every filtered voice
// (velocity timbre). For `Engine.renderSegment` (SegmentMix.swift).

/// Mixes up to `n` frames of a filtered `voice` (velocity timbre: two one-pole low-passes,
/// z += c (x - z), y += c (z - y), on its sample, then its gain) into `left`, or into `left` and `right` with its pan gains if `right` is
/// given; returns true when the voice has ended.
@_noLocks
@inline(__always)
func mixFilteredVoice(
    _ voice: inout Voice, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
    frameCount n: Int
) -> Bool {
    let available = min(n, voice.frameCount - voice.position)
    let source = voice.frames + voice.position
    let c = voice.lowpass
    var z = voice.lowpassState, y = voice.lowpassState2
    let ramp = voice.gain
    let gl: Float, gr: Float
    if right != nil { (gl, gr) = (voice.leftGain, voice.rightGain) } else { (gl, gr) = (1, 1) }
    if let right {
        for j in 0..<available {
            z = flush(z + c * (Float(source[j]) - z))
            y = flush(y + c * (z - y))
            let g = ramp.value(at: j)
            let x = y * g
            left[j] += x * gl
            right[j] += x * gr
        }
    } else {
        for j in 0..<available {
            z = flush(z + c * (Float(source[j]) - z))
            y = flush(y + c * (z - y))
            let g = ramp.value(at: j)
            left[j] += y * g
        }
    }
    voice.lowpassState = z
    voice.lowpassState2 = y
    voice.gain.advance(by: available)
    voice.position += available
    if !voice.phase.is(.sounding), voice.gain.framesLeft == 0, voice.gain.value == 0 { return true }
    return voice.position >= voice.frameCount
}

/// (File scope: a static method would touch the class metadata on the render thread.)
/// Mixes up to `n` frames of `voice` into `bus`; returns true when the voice has ended.
@_noLocks
@inline(__always)
func mixVoice(
    _ voice: inout Voice, into bus: UnsafeMutablePointer<Float>,
    frameCount n: Int
) -> Bool {
    let available = min(n, voice.frameCount - voice.position)
    let source = voice.frames + voice.position
    var k = 0
    if voice.gain.framesLeft > 0 {
        let m = min(available, voice.gain.framesLeft)
        let g0 = voice.gain.value, step = voice.gain.step
        // Int32 index: converts to Float in SIMD registers; an Int (64-bit) one goes scalar.
        for j in 0..<Int32(m) { bus[Int(j)] += Float(source[Int(j)]) * (g0 + step * Float(j)) }
        voice.gain.advance(by: m)
        k = m
        if !voice.phase.is(.sounding), voice.gain.framesLeft == 0, voice.gain.value == 0 {
            return true
        }
    }
    let g = voice.gain.value
    for j in k..<available { bus[j] += Float(source[j]) * g }
    voice.position += available
    return voice.position >= voice.frameCount
}

/// Mixes up to `n` frames of a panned `voice` into `left` and `right` at its gain × its key's
/// pan gains (as a `StereoBatch` does once its gain is still); returns true when it has ended.
@_noLocks
@inline(__always)
func mixPannedVoice(
    _ voice: inout Voice, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
    frameCount n: Int
) -> Bool {
    let available = min(n, voice.frameCount - voice.position)
    let source = voice.frames + voice.position
    let gl = voice.leftGain, gr = voice.rightGain
    var k = 0
    if voice.gain.framesLeft > 0 {
        let m = min(available, voice.gain.framesLeft)
        let g0 = voice.gain.value, step = voice.gain.step
        for j in 0..<Int32(m) {
            let x = Float(source[Int(j)]) * (g0 + step * Float(j))
            left[Int(j)] += x * gl
            right[Int(j)] += x * gr
        }
        voice.gain.advance(by: m)
        k = m
        if !voice.phase.is(.sounding), voice.gain.framesLeft == 0, voice.gain.value == 0 {
            return true
        }
    }
    let hl = voice.gain.value * gl, hr = voice.gain.value * gr
    for j in k..<available {
        let x = Float(source[j])
        left[j] += x * hl
        right[j] += x * hr
    }
    voice.position += available
    return voice.position >= voice.frameCount
}
