// The four-voice mixing loops (into one bus, and panned into two): where a dense render spends
// most of its time.
//
// This file is compiled twice: here in BellkeysEngine for every CPU, and in BellkeysWideMix
// (Sources/BellkeysWideMix/MixLoops.swift is a link to this file) for x86-64 CPUs with AVX2,
// where the same loop converts and scales 8 samples an instruction instead of 4. The engine
// picks one when it is built (`EngineConfiguration.wideMixing`). Both do the same IEEE
// operations in the same order on every frame (no fused multiply-add: Swift does not contract
// a * b + c), so they give the same bytes; `Tests/BellkeysLoadingTests/WideMixingTests.swift` checks.

/// Adds `count` (1 to 4) voices' 16-bit samples × their gains into `b` over `n` frames:
/// b[j] += (a0[j] h0 + a1[j] h1) + (a2[j] h2 + a3[j] h3), fewer terms for fewer voices.
/// Thread: render. Real-time safe.
@_noLocks
package func mixVoices(
    count: Int, into b: UnsafeMutablePointer<Float>,
    _ a0: UnsafePointer<Int16>, _ a1: UnsafePointer<Int16>,
    _ a2: UnsafePointer<Int16>, _ a3: UnsafePointer<Int16>,
    gains h0: Float, _ h1: Float, _ h2: Float, _ h3: Float, frameCount n: Int
) {
    switch count {
    case 4:
        for j in 0..<n {
            b[j] += (Float(a0[j]) * h0 + Float(a1[j]) * h1) + (Float(a2[j]) * h2 + Float(a3[j]) * h3)
        }
    case 3:
        for j in 0..<n { b[j] += (Float(a0[j]) * h0 + Float(a1[j]) * h1) + Float(a2[j]) * h2 }
    case 2:
        for j in 0..<n { b[j] += Float(a0[j]) * h0 + Float(a1[j]) * h1 }
    case 1:
        for j in 0..<n { b[j] += Float(a0[j]) * h0 }
    default:
        break
    }
}

/// Adds `count` (1 to 4) panned voices' 16-bit samples into a left and a right bus over `n`
/// frames, each voice at its own left gain (`h`) and right gain (`k`): its gain × its key's pan
/// gain on that side. l[j] += (a0[j] h0 + a1[j] h1) + (a2[j] h2 + a3[j] h3), r likewise with k,
/// fewer terms for fewer voices. Thread: render. Real-time safe.
@_noLocks
package func mixVoicesStereo(
    count: Int, left l: UnsafeMutablePointer<Float>, right r: UnsafeMutablePointer<Float>,
    _ a0: UnsafePointer<Int16>, _ a1: UnsafePointer<Int16>,
    _ a2: UnsafePointer<Int16>, _ a3: UnsafePointer<Int16>,
    left h0: Float, _ h1: Float, _ h2: Float, _ h3: Float,
    right k0: Float, _ k1: Float, _ k2: Float, _ k3: Float, frameCount n: Int
) {
    switch count {
    case 4:
        for j in 0..<n {
            let x0 = Float(a0[j]), x1 = Float(a1[j]), x2 = Float(a2[j]), x3 = Float(a3[j])
            l[j] += (x0 * h0 + x1 * h1) + (x2 * h2 + x3 * h3)
            r[j] += (x0 * k0 + x1 * k1) + (x2 * k2 + x3 * k3)
        }
    case 3:
        for j in 0..<n {
            let x0 = Float(a0[j]), x1 = Float(a1[j]), x2 = Float(a2[j])
            l[j] += (x0 * h0 + x1 * h1) + x2 * h2
            r[j] += (x0 * k0 + x1 * k1) + x2 * k2
        }
    case 2:
        for j in 0..<n {
            let x0 = Float(a0[j]), x1 = Float(a1[j])
            l[j] += x0 * h0 + x1 * h1
            r[j] += x0 * k0 + x1 * k1
        }
    case 1:
        for j in 0..<n {
            let x0 = Float(a0[j])
            l[j] += x0 * h0
            r[j] += x0 * k0
        }
    default:
        break
    }
}
