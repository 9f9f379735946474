import BellkeysModel
import Glibc
import Testing

@testable import BellkeysEngine

/// A loop's seam goes through the kernel loop from an unrolled copy (`seamWindow`): it must
/// read what the frame-by-frame path (`readAcrossLoop`) reads, for loops shorter and longer
/// than the kernel, mono and stereo, down and up, before and after the loop comes round.
@Suite struct LoopSeams {
    @Test(arguments: InterpolationQuality.allCases)
    func theSeamReadsWhatTheFrameByFramePathReads(quality: InterpolationQuality) {
        let frameCount = 2_000
        let mono: [Float] = (0..<frameCount).map { (i: Int) -> Float in
            let x = Double(i)
            return Float(0.5 * sin(x * 0.37) + 0.3 * sin(x * 0.011))
        }
        let bank = SampleBank(samples: [mono], sampleRate: 48_000)
        bank.append(left: mono, right: mono.map { (x: Float) -> Float in -0.7 * x })
        let kernels = InterpolationKernels(quality: quality, highestRatio: 4)
        let seam = UnsafeMutablePointer<Int16>.allocate(capacity: seamCapacity)
        seam.initialize(repeating: 0, count: seamCapacity)
        defer { seam.deallocate() }
        let count = 6_000
        var worst: Float = 0
        for stereo in [false, true] {
            let frames = bank.frames(of: stereo ? 1 : 0)
            for (loopStart, loopEnd) in [(1_000, 1_004), (1_000, 1_011), (40, 79), (700, 999)] {
                for ratio in [0.37, 1.0, 1.61, 3.3] {
                    let increment = UInt64(ratio * 4_294_967_296)
                    var voice = PitchedVoice()
                    voice.isStereo = stereo
                    voice.increment = increment
                    voice.kernel = Int32(kernels.level(increment: increment))
                    voice.loop = .continuous
                    voice.looping = true
                    voice.loopStart = loopStart
                    voice.loopEnd = loopEnd
                    voice.phaseFrames = UInt64(loopStart / 2) << 32 | 0x1234_5678
                    var reference = voice
                    let left = [Float](repeating: 0, count: count), right = left
                    var gotLeft = left, gotRight = right
                    let produced = gotLeft.withUnsafeMutableBufferPointer { l in
                        gotRight.withUnsafeMutableBufferPointer { r in
                            resample(
                                &voice, frames: frames, frameCount: frameCount, kernels: kernels.levels, wide: false,
                                left: l.baseAddress!, right: r.baseAddress!, count: count, seam: seam)
                        }
                    }
                    #expect(produced == count)
                    // The reference: every frame read one at a time, across the seam or not.
                    let level = kernels.levels[Int(reference.kernel)]
                    var wantLeft = left, wantRight = right
                    for j in 0..<count {
                        var position = Int(reference.phaseFrames >> 32)
                        if position > loopEnd {
                            let length = loopEnd - loopStart + 1
                            reference.phaseFrames -= UInt64((position - loopEnd - 1) / length * length + length) << 32
                            position = Int(reference.phaseFrames >> 32)
                            reference.wrapped = true
                        }
                        wantLeft.withUnsafeMutableBufferPointer { l in
                            wantRight.withUnsafeMutableBufferPointer { r in
                                readAcrossLoop(
                                    &reference, frames: frames, coefficients: level.coefficients, taps: level.taps,
                                    left: l.baseAddress! + j, right: r.baseAddress! + j)
                            }
                        }
                        reference.phaseFrames &+= increment
                    }
                    for j in 0..<count {
                        worst = max(worst, abs(gotLeft[j] - wantLeft[j]))
                        if stereo { worst = max(worst, abs(gotRight[j] - wantRight[j])) }
                    }
                }
            }
        }
        // Stored values run to ±32767: the two paths differ only in the order of the sums.
        #expect(worst < 0.05, "worst difference \(worst) of 32767")
    }
}
