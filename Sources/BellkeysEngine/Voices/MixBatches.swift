// Voices gathered four at a time for the four-voice loops (MixLoops.swift): into one bus, or
// panned into a left and a right bus, through the portable loop or its AVX2 build.
#if arch(x86_64)
import BellkeysWideMix
#endif

/// Up to four voices waiting to be mixed into the same bus at constant gains, and which loop
/// mixes them (`mixVoices`: the portable one, or with `wide` the AVX2 build of the same loop).
struct VoiceBatch {
    var count = 0
    var bus = UnsafeMutablePointer<Float>(bitPattern: 16)!
    var s0 = UnsafePointer<Int16>(bitPattern: 16)!, s1 = UnsafePointer<Int16>(bitPattern: 16)!
    var s2 = UnsafePointer<Int16>(bitPattern: 16)!, s3 = UnsafePointer<Int16>(bitPattern: 16)!
    var g0: Float = 0, g1: Float = 0, g2: Float = 0, g3: Float = 0
    let wide: Bool

    // @_noLocks, so that SegmentMix.swift may call it (a debug build checks the attribute file by
    // file); @inline(__always), as the attribute alone kept the optimizer from inlining it.
    @_noLocks
    @inline(__always)
    init(wide: Bool) { self.wide = wide }

    @_noLocks
    @inline(__always)
    mutating func add(_ source: UnsafePointer<Int16>, gain: Float, bus: UnsafeMutablePointer<Float>) {
        self.bus = bus
        switch count {
        case 0: (s0, g0) = (source, gain)
        case 1: (s1, g1) = (source, gain)
        case 2: (s2, g2) = (source, gain)
        default: (s3, g3) = (source, gain)
        }
        count += 1
    }

    /// Mixes the waiting voices over `n` frames and empties the batch.
    @_noLocks
    mutating func flush(frameCount n: Int) {
        #if arch(x86_64)
        if wide {
            BellkeysWideMix.mixVoices(count: count, into: bus, s0, s1, s2, s3, gains: g0, g1, g2, g3, frameCount: n)
            count = 0
            return
        }
        #endif
        BellkeysEngine.mixVoices(count: count, into: bus, s0, s1, s2, s3, gains: g0, g1, g2, g3, frameCount: n)
        count = 0
    }
}

/// Up to four panned voices waiting to be mixed into the same left and right buses at constant
/// gains (each voice's gain × its key's pan gain on that side), and which loop mixes them (as
/// `VoiceBatch`).
struct StereoBatch {
    var count = 0
    var left = UnsafeMutablePointer<Float>(bitPattern: 16)!, right = UnsafeMutablePointer<Float>(bitPattern: 16)!
    var s0 = UnsafePointer<Int16>(bitPattern: 16)!, s1 = UnsafePointer<Int16>(bitPattern: 16)!
    var s2 = UnsafePointer<Int16>(bitPattern: 16)!, s3 = UnsafePointer<Int16>(bitPattern: 16)!
    var h0: Float = 0, h1: Float = 0, h2: Float = 0, h3: Float = 0
    var k0: Float = 0, k1: Float = 0, k2: Float = 0, k3: Float = 0
    let wide: Bool

    // @_noLocks, so that SegmentMix.swift may call it (a debug build checks the attribute file by
    // file); @inline(__always), as the attribute alone kept the optimizer from inlining it.
    @_noLocks
    @inline(__always)
    init(wide: Bool) { self.wide = wide }

    @_noLocks
    @inline(__always)
    mutating func add(
        _ source: UnsafePointer<Int16>, left h: Float, right k: Float,
        into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>
    ) {
        self.left = left
        self.right = right
        switch count {
        case 0: (s0, h0, k0) = (source, h, k)
        case 1: (s1, h1, k1) = (source, h, k)
        case 2: (s2, h2, k2) = (source, h, k)
        default: (s3, h3, k3) = (source, h, k)
        }
        count += 1
    }

    /// Mixes the waiting voices over `n` frames and empties the batch.
    @_noLocks
    mutating func flush(frameCount n: Int) {
        #if arch(x86_64)
        if wide {
            BellkeysWideMix.mixVoicesStereo(
                count: count, left: left, right: right, s0, s1, s2, s3,
                left: h0, h1, h2, h3, right: k0, k1, k2, k3, frameCount: n)
            count = 0
            return
        }
        #endif
        BellkeysEngine.mixVoicesStereo(
            count: count, left: left, right: right, s0, s1, s2, s3,
            left: h0, h1, h2, h3, right: k0, k1, k2, k3, frameCount: n)
        count = 0
    }
}
