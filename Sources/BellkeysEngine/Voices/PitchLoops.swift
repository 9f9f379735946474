// The pitched voices' interpolation loop: a sample read at a ratio through a windowed-sinc
// kernel (Kernels.swift). Where a dense transposed render spends most of its time.
//
// This file is compiled twice, as MixLoops.swift is: here in BellkeysEngine for every CPU, and in
// BellkeysWideMix (Sources/BellkeysWideMix/PitchLoops.swift is a link to this file) for x86-64
// CPUs with AVX2, where a vector of 8 floats is one instruction instead of two. The engine picks
// one (`EngineConfiguration.wideMixing`). Both do the same IEEE operations in the same order on
// every frame (no fused multiply-add: Swift does not contract a * b + c), so they give the same
// bits; `Tests/BellkeysEngineTests/PitchedMixingTests.swift` checks.
//
// A call first widens the 16-bit frames its kernels will read into floats (a stereo sample's two
// sides apart), so the kernel loop reads floats; then each output frame is a dot product of its
// phase's coefficients (c + w × d, between two of the 256 tabulated phases) with the taps around
// it, summed in 8 lanes. Eight frames' lanes are added up together, so the per-frame horizontal
// sum costs a few instructions, not a chain of seven; a frame's value never depends on which
// group of eight it fell in (its lanes are added in the same order in every group), so where
// blocks split a voice does not change its output.

/// Floats a workspace holds per side for the widened frames; the workspace is twice that plus
/// `pitchStashFloats`.
package let pitchWindowFrames = 2_048
/// Floats of a workspace's stash: eight frames' lane sums for each side, and their weights.
package let pitchStashFloats = 136

/// Reads `count` frames of a mono (`channels` 1) or interleaved stereo (2) sample at `frames`,
/// from 32.32 position `phase` on by `increment` a frame, through a `taps`-tap kernel
/// (`coefficients`: 256 rows of `taps` coefficients and their differences to the next row), into
/// `left` (and `right`, for stereo). Every tap must lie inside the sample or its padding. Uses
/// `workspace` (`2 * pitchWindowFrames + pitchStashFloats` floats). Returns the position after
/// the last frame. Thread: render. Real-time safe.
@_noLocks
package func interpolate(
    _ frames: UnsafePointer<Int16>, channels: Int, phase: UInt64, increment: UInt64,
    coefficients: UnsafePointer<Float>, taps: Int, left: UnsafeMutablePointer<Float>,
    right: UnsafeMutablePointer<Float>, count: Int, workspace: UnsafeMutablePointer<Float>
) -> UInt64 {
    let windowLeft = workspace, windowRight = workspace + pitchWindowFrames
    let stash = workspace + 2 * pitchWindowFrames
    let back = taps / 2 - 1
    var p = phase
    var done = 0
    while done < count {
        // As many frames as the window holds the taps of: positions may advance `room` frames.
        var m = count - done
        let room = pitchWindowFrames - taps - 8
        let (advance, overflow) = UInt64(m - 1).multipliedReportingOverflow(by: increment)
        if overflow || advance >= UInt64(room) << 32 {
            m = Int((UInt64(room) << 32) / increment) + 1
        }
        let first = Int(p >> 32) - back
        let end = Int((p &+ UInt64(m - 1) &* increment) >> 32) - back + taps
        if channels == 2 {
            widenStereo(frames + 2 * first, left: windowLeft, right: windowRight, frameCount: end - first)
        } else {
            widenMono(frames + first, into: windowLeft, frameCount: end - first)
        }
        // Frame i of the sample is at base[i], wherever the window starts.
        let baseLeft = windowLeft - first, baseRight = windowRight - first
        let outLeft = left + done, outRight = right + done
        if channels == 2 {
            p = kernelLoops(
                StereoSides.self, baseLeft, baseRight, phase: p, increment: increment, coefficients: coefficients,
                taps: taps, left: outLeft, right: outRight, count: m, stash: stash)
        } else {
            p = kernelLoops(
                MonoSides.self, baseLeft, baseRight, phase: p, increment: increment, coefficients: coefficients,
                taps: taps, left: outLeft, right: outRight, count: m, stash: stash)
        }
        done += m
    }
    return p
}

/// `frameCount` 16-bit frames as floats.
@_noLocks
@inline(__always)
func widenMono(_ source: UnsafePointer<Int16>, into window: UnsafeMutablePointer<Float>, frameCount n: Int) {
    var i = 0
    while i + 8 <= n {
        let v = UnsafeRawPointer(source + i).loadUnaligned(as: SIMD8<Int16>.self)
        UnsafeMutableRawPointer(window + i).storeBytes(of: SIMD8<Float>(v), as: SIMD8<Float>.self)
        i += 8
    }
    while i < n {
        window[i] = Float(source[i])
        i += 1
    }
}

/// `frameCount` interleaved 16-bit stereo frames as floats, each side on its own.
@_noLocks
@inline(__always)
func widenStereo(
    _ source: UnsafePointer<Int16>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
    frameCount n: Int
) {
    var i = 0
    while i + 8 <= n {
        // A frame as one 32-bit lane: left in the low half, right in the high half.
        let v = UnsafeRawPointer(source + 2 * i).loadUnaligned(as: SIMD8<Int32>.self)
        UnsafeMutableRawPointer(left + i).storeBytes(of: SIMD8<Float>((v &<< 16) &>> 16), as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(right + i).storeBytes(of: SIMD8<Float>(v &>> 16), as: SIMD8<Float>.self)
        i += 8
    }
    while i < n {
        left[i] = Float(source[2 * i])
        right[i] = Float(source[2 * i + 1])
        i += 1
    }
}

@_noLocks
@inline(__always)
func loadFloats(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}

/// A kernel length known when compiling (`fixed`; 0 for a length known only when running), and
/// a sample's sides likewise: `kernelLoop` is generic over both, and the compiler makes one body
/// for each pair it is called with, in which the tap loop is unrolled, the table row's offset is
/// a constant multiple and the stereo test is gone. Generic specialisation always makes those
/// bodies; `@inline(__always)`, which this used before, was not honoured by Swift 6.0.3 for the
/// 16-, 24- and 32-tap loops on arm64 (docs/design/arm64.md).
protocol KernelTaps { static var fixed: Int { get } }
enum Taps8: KernelTaps { static var fixed: Int { 8 } }
enum Taps16: KernelTaps { static var fixed: Int { 16 } }
enum Taps24: KernelTaps { static var fixed: Int { 24 } }
enum Taps32: KernelTaps { static var fixed: Int { 32 } }
enum AnyTaps: KernelTaps { static var fixed: Int { 0 } }
protocol KernelSides { static var stereo: Bool { get } }
enum MonoSides: KernelSides { static var stereo: Bool { false } }
enum StereoSides: KernelSides { static var stereo: Bool { true } }

/// `kernelLoop` for the common kernel lengths (8, 16, 24, 32 taps) and any other. (Not marked
/// `@_noLocks` itself, which would judge the unspecialised generic body, metadata and all:
/// `interpolate`'s mark covers the bodies it calls, which are specialised.)
func kernelLoops<Sides: KernelSides>(
    _ sides: Sides.Type, _ baseLeft: UnsafePointer<Float>, _ baseRight: UnsafePointer<Float>, phase: UInt64,
    increment: UInt64, coefficients: UnsafePointer<Float>, taps: Int, left: UnsafeMutablePointer<Float>,
    right: UnsafeMutablePointer<Float>, count: Int, stash: UnsafeMutablePointer<Float>
) -> UInt64 {
    switch taps {
    case 8:
        kernelLoop(
            Taps8.self, Sides.self, baseLeft, baseRight, phase: phase, increment: increment,
            coefficients: coefficients, taps: taps, left: left, right: right, count: count, stash: stash)
    case 16:
        kernelLoop(
            Taps16.self, Sides.self, baseLeft, baseRight, phase: phase, increment: increment,
            coefficients: coefficients, taps: taps, left: left, right: right, count: count, stash: stash)
    case 24:
        kernelLoop(
            Taps24.self, Sides.self, baseLeft, baseRight, phase: phase, increment: increment,
            coefficients: coefficients, taps: taps, left: left, right: right, count: count, stash: stash)
    case 32:
        kernelLoop(
            Taps32.self, Sides.self, baseLeft, baseRight, phase: phase, increment: increment,
            coefficients: coefficients, taps: taps, left: left, right: right, count: count, stash: stash)
    default:
        kernelLoop(
            AnyTaps.self, Sides.self, baseLeft, baseRight, phase: phase, increment: increment,
            coefficients: coefficients, taps: taps, left: left, right: right, count: count, stash: stash)
    }
}

/// The frames of one window: each frame's lanes into `stash`, eight frames at a time, then
/// their sums out. Returns the position after the last frame. (Wrapping arithmetic throughout:
/// nothing here can overflow, and checked operations cost more than the arithmetic.)
func kernelLoop<Taps: KernelTaps, Sides: KernelSides>(
    _ fixedTaps: Taps.Type, _ sides: Sides.Type, _ baseLeft: UnsafePointer<Float>, _ baseRight: UnsafePointer<Float>,
    phase: UInt64, increment: UInt64, coefficients: UnsafePointer<Float>, taps runningTaps: Int,
    left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int,
    stash: UnsafeMutablePointer<Float>
) -> UInt64 {
    let taps = Taps.fixed == 0 ? runningTaps : Taps.fixed
    let stereo = Sides.stereo
    let back = taps / 2 - 1
    let rowFloats = 2 &* taps
    let weights = stash + 128
    // The fractions of eight frames in a row are the first one's plus 0...7 increments, modulo
    // 2³² (a carry goes to the frame index).
    let steps = SIMD8<UInt32>(0, 1, 2, 3, 4, 5, 6, 7) &* UInt32(truncatingIfNeeded: increment)
    var p = phase
    var j = 0
    while j < count {
        let n = min(8, count &- j)
        // The top 8 bits of a fraction pick the phase row; the next 24 weigh the difference to
        // the next row.
        let fractions = SIMD8<UInt32>(repeating: UInt32(truncatingIfNeeded: p)) &+ steps
        let w8 = SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: fractions & 0xFF_FFFF)) * (1 / 16_777_216)
        UnsafeMutableRawPointer(weights).storeBytes(of: w8, as: SIMD8<Float>.self)
        var k = 0
        while k < n {
            let row = coefficients + Int(UInt32(truncatingIfNeeded: p) >> 24) &* rowFloats
            let w = weights[k]
            let i = Int(truncatingIfNeeded: p >> 32) &- back
            let sourceLeft = baseLeft + i
            var c = loadFloats(row) + w * loadFloats(row + taps)
            var sumLeft = c * loadFloats(sourceLeft)
            if stereo {
                let sourceRight = baseRight + i
                var sumRight = c * loadFloats(sourceRight)
                var t = 8
                while t < taps {
                    c = loadFloats(row + t) + w * loadFloats(row + taps + t)
                    sumLeft += c * loadFloats(sourceLeft + t)
                    sumRight += c * loadFloats(sourceRight + t)
                    t &+= 8
                }
                UnsafeMutableRawPointer(stash + (64 &+ 8 &* k)).storeBytes(of: sumRight, as: SIMD8<Float>.self)
            } else {
                var t = 8
                while t < taps {
                    c = loadFloats(row + t) + w * loadFloats(row + taps + t)
                    sumLeft += c * loadFloats(sourceLeft + t)
                    t &+= 8
                }
            }
            UnsafeMutableRawPointer(stash + 8 &* k).storeBytes(of: sumLeft, as: SIMD8<Float>.self)
            p &+= increment
            k &+= 1
        }
        if n == 8 {
            UnsafeMutableRawPointer(left + j).storeBytes(of: laneSums(stash), as: SIMD8<Float>.self)
            if stereo {
                UnsafeMutableRawPointer(right + j).storeBytes(of: laneSums(stash + 64), as: SIMD8<Float>.self)
            }
        } else {
            // (The frames missing from the group of eight sum zeros; the others as in any group.)
            while k < 8 {
                UnsafeMutableRawPointer(stash + 8 &* k).storeBytes(of: SIMD8<Float>(), as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(stash + (64 &+ 8 &* k)).storeBytes(of: SIMD8<Float>(), as: SIMD8<Float>.self)
                k &+= 1
            }
            let sums = laneSums(stash)
            for k in 0..<n { left[j &+ k] = sums[k] }
            if stereo {
                let sumsRight = laneSums(stash + 64)
                for k in 0..<n { right[j &+ k] = sumsRight[k] }
            }
        }
        j &+= n
    }
    return p
}

/// The lane sums of the eight 8-lane vectors at `s`, `s + 8`, ... `s + 56`, in that order: each
/// ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)).
@_noLocks
@inline(__always)
func laneSums(_ s: UnsafePointer<Float>) -> SIMD8<Float> {
    let q0 = pairSums(pairSums(loadFloats(s), loadFloats(s + 8)), pairSums(loadFloats(s + 16), loadFloats(s + 24)))
    let q1 = pairSums(
        pairSums(loadFloats(s + 32), loadFloats(s + 40)), pairSums(loadFloats(s + 48), loadFloats(s + 56)))
    return pairSums(q0, q1)
}

/// Adjacent lanes added: a0 + a1, a2 + a3, a4 + a5, a6 + a7, then b's likewise.
@_noLocks
@inline(__always)
func pairSums(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
    let both = SIMD16<Float>(lowHalf: a, highHalf: b)
    return both.evenHalf + both.oddHalf
}
