// The reverb's input chain before the network: the send copied into the work area, then (after
// the DC blocker, which runs in the network's loop) the pre-delay and the two all-pass diffusers.

extension Reverb {
    /// `m` frames of `input` into the input part of `work` (after the last 4 frames before them).
    @_noLocks
    @inline(__always)
    func takeInput(_ input: UnsafeMutablePointer<Float>, frameCount m: Int) {
        let chunk = work + (Reverb.inputPart &+ 4)
        var j = 0
        while j &+ 4 <= m {
            UnsafeMutableRawPointer(chunk + j).storeBytes(
                of: UnsafeRawPointer(input + j).loadUnaligned(as: SIMD4<Float>.self),
                as: SIMD4<Float>.self)
            j &+= 4
        }
        while j < m {
            chunk[j] = input[j]
            j &+= 1
        }
    }

    /// The chunk after the DC blocker through the pre-delay and the two all-pass diffusers (gain
    /// 0.6), in place, in runs in which none of the three wraps (so nothing a run reads from
    /// them was written in it).
    @_noLocks
    @inline(__always)
    mutating func diffuse(frameCount m: Int) {
        let chunk = work + (Reverb.diffusedPart &+ 4)
        var predelay = predelayPosition, position0 = diffuserPosition0, position1 = diffuserPosition1
        var j = 0
        while j < m {
            let count = min(
                min(m &- j, predelayLength &- predelay),
                min(diffuserLength0 &- position0, diffuserLength1 &- position1))
            let x = chunk + j, before = predelayLine + predelay
            let line0 = diffusers + position0, line1 = diffusers + (diffuserLength0 &+ position1)
            var k = 0
            while k &+ 4 <= count {
                let delayed = UnsafeRawPointer(before + k).loadUnaligned(as: SIMD4<Float>.self)
                UnsafeMutableRawPointer(before + k).storeBytes(
                    of: UnsafeRawPointer(x + k).loadUnaligned(as: SIMD4<Float>.self),
                    as: SIMD4<Float>.self)
                let a = allPass(delayed, line: line0 + k)
                UnsafeMutableRawPointer(x + k).storeBytes(of: allPass(a, line: line1 + k), as: SIMD4<Float>.self)
                k &+= 4
            }
            while k < count {
                let delayed = before[k]
                before[k] = x[k]
                let v0 = flush(delayed + 0.6 * line0[k])
                let a = line0[k] - 0.6 * v0
                line0[k] = v0
                let v1 = flush(a + 0.6 * line1[k])
                x[k] = line1[k] - 0.6 * v1
                line1[k] = v1
                k &+= 1
            }
            j &+= count
            predelay &+= count
            if predelay == predelayLength { predelay = 0 }
            position0 &+= count
            if position0 == diffuserLength0 { position0 = 0 }
            position1 &+= count
            if position1 == diffuserLength1 { position1 = 0 }
        }
        predelayPosition = predelay
        diffuserPosition0 = position0
        diffuserPosition1 = position1
    }
}

/// 4 frames `x` through a Schroeder all-pass of gain 0.6 whose delay is at `line` (its run at
/// the frames' place, which takes the new values). Real-time safe.
@_noLocks
@inline(__always)
func allPass(_ x: SIMD4<Float>, line: UnsafeMutablePointer<Float>) -> SIMD4<Float> {
    let delayed = UnsafeRawPointer(line).loadUnaligned(as: SIMD4<Float>.self)
    let v = ((x + 0.6 * delayed) + 1e-18) - 1e-18 // flush, lane by lane
    UnsafeMutableRawPointer(line).storeBytes(of: v, as: SIMD4<Float>.self)
    return delayed - 0.6 * v
}
