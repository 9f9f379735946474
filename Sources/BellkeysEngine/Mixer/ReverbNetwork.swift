// The reverb's delay network, one chunk at a time: the eight lines through their low-passes
// (and, in the same loop, the input through the DC blocker), the Hadamard transform back into the
// lines and out to the two sides, and the lines' positions moving on.

extension Reverb {
    /// Line i at its position (its next output), as a pointer.
    @_noLocks
    @inline(__always)
    func cursor(_ i: Int) -> UnsafeMutablePointer<Float> {
        lines + (i &* stride &+ 4 &+ positions[i])
    }

    /// The lines' next `m` outputs, each lowered by its gain and low-passed (y += c (x - y)),
    /// into the outputs part of `work`, and the input's chunk through the DC blocker into the
    /// diffused part; with `watch`, the largest magnitude of both into `loudest`.
    ///
    /// y[j] = (1 - c) y[j - 1] + c g x[j], 4 frames at once, unrolled:
    /// y[j] = c g (((x[j - 3] k + x[j - 2]) k + x[j - 1]) k + x[j]) + k⁴ y[j - 4], k = 1 - c:
    /// each vector of x is one run of the line (its 3 outputs before the chunk are put in front
    /// of it for the time), no lanes move.
    @_noLocks
    @inline(__always)
    func lowpassLines(frameCount m: Int, loudest: inout SIMD4<Float>, watch: Bool) {
        let history = UnsafeMutableRawPointer(work + Reverb.historyPart)
        let saved = UnsafeMutableRawPointer(work + Reverb.savedPart)
        for i in 0..<Reverb.lineCount {
            let front = UnsafeMutableRawPointer(cursor(i) - 4)
            saved.storeBytes(
                of: front.loadUnaligned(as: SIMD4<Float>.self), toByteOffset: 16 &* i, as: SIMD4<Float>.self)
            front.storeBytes(of: history.load(fromByteOffset: 16 &* i, as: SIMD4<Float>.self), as: SIMD4<Float>.self)
        }
        // (Two copies of the loop: the one without the loudness is the one that runs while
        // there is input.)
        if watch {
            lowpassGroups(frameCount: m, loudest: &loudest, watch: true)
        } else {
            lowpassGroups(frameCount: m, loudest: &loudest, watch: false)
        }
        // The DC blocker's: the frames of a last group of 4 that are in the chunk; its last 4
        // inputs and outputs, in front of the next chunk's.
        let highPassIn = work + (Reverb.inputPart &+ 4), highPassOut = work + (Reverb.diffusedPart &+ 4)
        if watch {
            for j in (m & ~3)..<m { loudest[0] = max(loudest[0], highPassOut[j].magnitude) }
        }
        UnsafeMutableRawPointer(highPassIn - 4).storeBytes(
            of: UnsafeRawPointer(highPassIn + (m &- 4)).loadUnaligned(as: SIMD4<Float>.self),
            as: SIMD4<Float>.self)
        UnsafeMutableRawPointer(highPassOut - 4).storeBytes(
            of: UnsafeRawPointer(highPassOut + (m &- 4)).loadUnaligned(as: SIMD4<Float>.self),
            as: SIMD4<Float>.self)
        for i in 0..<Reverb.lineCount {
            let run = cursor(i), outputs = work + (Reverb.outputsPart &+ i &* Reverb.outputsStride)
            // The frames of a last group of 4 that are in the chunk.
            if watch {
                for j in (m & ~3)..<m { loudest[0] = max(loudest[0], outputs[4 &+ j].magnitude) }
            }
            // For the next chunk: the last 3 outputs of the line (before what was in front of it
            // goes back: with a chunk under 3 frames, some are from there), the last 4 ys.
            history.storeBytes(
                of: UnsafeRawPointer(run + (m &- 4)).loadUnaligned(as: SIMD4<Float>.self),
                toByteOffset: 16 &* i, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run - 4).storeBytes(
                of: saved.load(fromByteOffset: 16 &* i, as: SIMD4<Float>.self),
                as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(outputs).storeBytes(
                of: UnsafeRawPointer(outputs + m).loadUnaligned(as: SIMD4<Float>.self),
                as: SIMD4<Float>.self)
        }
    }

    /// The loop of `lowpassLines`: 4 frames of each line at a time (a last group of them may
    /// run past the chunk; its loudness is not taken here).
    @_noLocks
    @inline(__always)
    func lowpassGroups(frameCount m: Int, loudest: inout SIMD4<Float>, watch: Bool) {
        let factors = UnsafeRawPointer(work + Reverb.factorsPart)
        let keep = factors.load(fromByteOffset: 16 &* Reverb.lineCount, as: SIMD4<Float>.self)
        let keep4 = factors.load(fromByteOffset: 16 &* Reverb.lineCount &+ 16, as: SIMD4<Float>.self)
        let outputs = UnsafeMutableRawPointer(work + Reverb.outputsPart)
        let highPass = UnsafeRawPointer(work + Reverb.highPassPart)
        let a = highPass.load(as: SIMD4<Float>.self), aLess1 = highPass.load(fromByteOffset: 16, as: SIMD4<Float>.self)
        let a3 = highPass.load(fromByteOffset: 32, as: SIMD4<Float>.self),
            a4 = highPass.load(fromByteOffset: 48, as: SIMD4<Float>.self)
        let highPassIn = UnsafeRawPointer(work + (Reverb.inputPart &+ 4))
        let highPassOut = UnsafeMutableRawPointer(work + (Reverb.diffusedPart &+ 4))
        let run0 = cursor(0), run1 = cursor(1), run2 = cursor(2), run3 = cursor(3)
        let run4 = cursor(4), run5 = cursor(5), run6 = cursor(6), run7 = cursor(7)
        var group = 0
        while group < m {
            let q = group, whole = q &+ 4 <= m
            /// Line i (at `run`) for frames q ..< q + 4.
            @inline(__always)
            func lowpass(_ i: Int, _ run: UnsafeMutablePointer<Float>, _ loudest: inout SIMD4<Float>) {
                let x = UnsafeRawPointer(run + q)
                let o = 4 &* (i &* Reverb.outputsStride &+ q)
                var h =
                    x.loadUnaligned(fromByteOffset: -12, as: SIMD4<Float>.self) * keep
                    + x.loadUnaligned(fromByteOffset: -8, as: SIMD4<Float>.self)
                h = h * keep + x.loadUnaligned(fromByteOffset: -4, as: SIMD4<Float>.self)
                h = h * keep + x.loadUnaligned(as: SIMD4<Float>.self)
                var y =
                    h * factors.load(fromByteOffset: 16 &* i, as: SIMD4<Float>.self)
                    + outputs.load(fromByteOffset: o, as: SIMD4<Float>.self) * keep4
                y = (y + 1e-18) - 1e-18 // flush, lane by lane
                outputs.storeBytes(of: y, toByteOffset: o &+ 16, as: SIMD4<Float>.self)
                if watch && whole { loudest = pointwiseLarger(loudest, magnitude(y)) }
            }
            lowpass(0, run0, &loudest)
            lowpass(1, run1, &loudest)
            lowpass(2, run2, &loudest)
            lowpass(3, run3, &loudest)
            lowpass(4, run4, &loudest)
            lowpass(5, run5, &loudest)
            lowpass(6, run6, &loudest)
            lowpass(7, run7, &loudest)
            // No DC into the room (an impulse's, a bell's offset): y = x - x' + a y', a = 0.999
            // (7.6 Hz at 48 kHz, 15 Hz at 96 kHz), unrolled as the low-passes are: y[j] = x[j]
            // + (a - 1) ((x[j - 3] a + x[j - 2]) a + x[j - 1]) - a³ x[j - 4] + a⁴ y[j - 4].
            // (Here, where its steps from one group of frames to the next overlap the lines'.)
            let x = highPassIn + 4 &* q
            var h =
                x.loadUnaligned(fromByteOffset: -12, as: SIMD4<Float>.self) * a
                + x.loadUnaligned(fromByteOffset: -8, as: SIMD4<Float>.self)
            h = h * a + x.loadUnaligned(fromByteOffset: -4, as: SIMD4<Float>.self)
            var y =
                (x.load(as: SIMD4<Float>.self) + h * aLess1)
                + (x.load(fromByteOffset: -16, as: SIMD4<Float>.self) * a3
                    + highPassOut.load(fromByteOffset: 4 &* q &- 16, as: SIMD4<Float>.self) * a4)
            y = (y + 1e-18) - 1e-18
            highPassOut.storeBytes(of: y, toByteOffset: 4 &* q, as: SIMD4<Float>.self)
            if watch && whole { loudest = pointwiseLarger(loudest, magnitude(y)) }
            group &+= 4
        }
    }

    /// The Hadamard transform of the low-passes' `m` outputs, with the input (after the input
    /// chain), back into the lines at their positions; rows 1 and 2 × the mix (and the fade)
    /// into `left` and `right` (`frame`: where they are in the call, for the fade).
    @_noLocks
    @inline(__always)
    func mixLines(
        frameCount m: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        level out: Float, fading: Bool, frame: Int
    ) {
        // A last group of 4 frames writes past the chunk: what was there goes back after.
        let past = (4 &- m & 3) & 3, saved = work + Reverb.savedPart
        for i in 0..<Reverb.lineCount {
            let run = cursor(i)
            for k in 0..<past { saved[i &* 4 &+ k] = run[m &+ k] }
        }
        let outputs = UnsafeRawPointer(work + Reverb.outputsPart + 4)
        let stride = 4 &* Reverb.outputsStride
        let diffused = UnsafeRawPointer(work + (Reverb.diffusedPart &+ 4))
        let sides = work + Reverb.sidesPart
        let fadeStart = fade
        let run0 = cursor(0), run1 = cursor(1), run2 = cursor(2), run3 = cursor(3)
        let run4 = cursor(4), run5 = cursor(5), run6 = cursor(6), run7 = cursor(7)
        var q = 0
        while q < m {
            let o = 4 &* q
            // The input goes into the lines with alternating signs (+ - + - + - + -): the
            // Hadamard's column 1, so it is added to line 1's output before the transform.
            let feed = diffused.load(fromByteOffset: o, as: SIMD4<Float>.self)
            let s0 = outputs.load(fromByteOffset: o, as: SIMD4<Float>.self)
            let s1 = outputs.load(fromByteOffset: o &+ stride, as: SIMD4<Float>.self) + feed
            let s2 = outputs.load(fromByteOffset: o &+ 2 &* stride, as: SIMD4<Float>.self)
            let s3 = outputs.load(fromByteOffset: o &+ 3 &* stride, as: SIMD4<Float>.self)
            let s4 = outputs.load(fromByteOffset: o &+ 4 &* stride, as: SIMD4<Float>.self)
            let s5 = outputs.load(fromByteOffset: o &+ 5 &* stride, as: SIMD4<Float>.self)
            let s6 = outputs.load(fromByteOffset: o &+ 6 &* stride, as: SIMD4<Float>.self)
            let s7 = outputs.load(fromByteOffset: o &+ 7 &* stride, as: SIMD4<Float>.self)
            // The fast Hadamard transform: three stages of sums and differences.
            let t0 = s0 + s1, t1 = s0 - s1, t2 = s2 + s3, t3 = s2 - s3
            let t4 = s4 + s5, t5 = s4 - s5, t6 = s6 + s7, t7 = s6 - s7
            let u0 = t0 + t2, u1 = t1 + t3, u2 = t0 - t2, u3 = t1 - t3
            let u4 = t4 + t6, u5 = t5 + t7, u6 = t4 - t6, u7 = t5 - t7
            // Back into the lines.
            let row1 = u1 + u5, row2 = u2 + u6
            UnsafeMutableRawPointer(run0 + q).storeBytes(of: u0 + u4, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run1 + q).storeBytes(of: row1, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run2 + q).storeBytes(of: row2, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run3 + q).storeBytes(of: u3 + u7, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run4 + q).storeBytes(of: u0 - u4, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run5 + q).storeBytes(of: u1 - u5, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run6 + q).storeBytes(of: u2 - u6, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run7 + q).storeBytes(of: u3 - u7, as: SIMD4<Float>.self)

            // Two orthogonal sign patterns for the two sides: the Hadamard's rows 1
            // (+ - + - + - + -) on the left, 2 (+ + - - + + - -) on the right, of the lines'
            // outputs alone (row 1 took the input × -1, row 2 × 1).
            var level = SIMD4<Float>(repeating: out)
            if fading {
                let f = frame &+ q
                level *= SIMD4(
                    fadeStart.value(at: f), fadeStart.value(at: f &+ 1),
                    fadeStart.value(at: f &+ 2), fadeStart.value(at: f &+ 3))
            }
            let toLeft = level * (row1 + feed), toRight = level * (row2 - feed)
            if q &+ 4 <= m {
                let l = UnsafeMutableRawPointer(left + q), r = UnsafeMutableRawPointer(right + q)
                l.storeBytes(of: l.loadUnaligned(as: SIMD4<Float>.self) + toLeft, as: SIMD4<Float>.self)
                r.storeBytes(of: r.loadUnaligned(as: SIMD4<Float>.self) + toRight, as: SIMD4<Float>.self)
            } else {
                // (Through memory: lanes taken out of the vectors here would make the optimizer
                // split the vectors of the loop.)
                UnsafeMutableRawPointer(sides).storeBytes(of: toLeft, as: SIMD4<Float>.self)
                UnsafeMutableRawPointer(sides + 4).storeBytes(of: toRight, as: SIMD4<Float>.self)
                for k in 0..<(m &- q) {
                    left[q &+ k] += sides[k]
                    right[q &+ k] += sides[4 &+ k]
                }
            }
            q &+= 4
        }
        for i in 0..<Reverb.lineCount {
            let run = cursor(i)
            for k in 0..<past { run[m &+ k] = saved[i &* 4 &+ k] }
        }
    }

    /// After `m` frames were written at the lines' positions: where that went past a line's end
    /// (into the copy of its start), the same values at its start; where it wrote the start,
    /// the copy too. Then the positions move on by `m`.
    @_noLocks
    @inline(__always)
    func advanceLines(by m: Int) {
        for i in 0..<Reverb.lineCount {
            let line = lines + (i &* stride &+ 4)
            let position = positions[i], length = lengths[i]
            let end = position &+ m
            if end > length {
                for j in length..<end { line[j &- length] = line[j] }
            }
            if position < chunkFrames {
                for j in position..<min(end, chunkFrames) { line[length &+ j] = line[j] }
            }
            positions[i] = end >= length ? end &- length : end
        }
    }
}

/// The larger of a and b, lane by lane (for magnitudes, never NaN). Real-time safe.
@_noLocks
@inline(__always)
func pointwiseLarger(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> {
    a.replacing(with: b, where: b .> a)
}

/// |v|, lane by lane. Real-time safe.
@_noLocks
@inline(__always)
func magnitude(_ v: SIMD4<Float>) -> SIMD4<Float> {
    unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & 0x7fff_ffff, to: SIMD4<Float>.self)
}
