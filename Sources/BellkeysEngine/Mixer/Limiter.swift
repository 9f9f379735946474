import Synchronization

extension Engine {
    /// Peak limiter: gain drops at once to keep |x| at the threshold, then recovers linearly.
    /// Exactly transparent (gain 1.0) while nothing passes the threshold.
    @_noLocks
    func limit(_ output: UnsafeMutablePointer<Float>, frameCount n: Int) {
        let threshold = configuration.limiterThreshold
        var g = limiterGain
        var limited = 0, clipped = 0
        for j in 0..<n {
            let x = output[j]
            let a = abs(x)
            let y: Float
            if a * g > threshold {
                g = threshold / a
                y = x < 0 ? -threshold : threshold // x * g could round one ulp past it
            } else {
                y = x * g
            }
            output[j] = y
            if g < 1 {
                limited += 1
                g = min(1, g + mixer.limiterRecovery)
            }
            if !(abs(y) <= 1) { clipped += 1 }
        }
        limiterGain = g
        if limited > 0 { limitedFrames.relaxedAdd(limited) }
        if clipped > 0 { clippedSamples.relaxedAdd(clipped) }
    }

    /// The same limiter over two channels, linked: one gain, from the louder channel of each
    /// frame, applied to both, so limiting never moves a bell's place between them. With equal
    /// channels it gives exactly what `limit` gives each. Clipped samples count per frame.
    @_noLocks
    func limit(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount n: Int) {
        let threshold = configuration.limiterThreshold
        var g = limiterGain
        var limited = 0, clipped = 0
        for j in 0..<n {
            let xl = left[j], xr = right[j]
            let a = max(abs(xl), abs(xr))
            var yl: Float, yr: Float
            if a * g > threshold {
                g = threshold / a
                // The louder channel lands exactly on the threshold; x * g could round past it,
                // so the quieter one is held to it too.
                yl = abs(xl) == a ? (xl < 0 ? -threshold : threshold) : min(max(xl * g, -threshold), threshold)
                yr = abs(xr) == a ? (xr < 0 ? -threshold : threshold) : min(max(xr * g, -threshold), threshold)
            } else {
                yl = xl * g
                yr = xr * g
            }
            left[j] = yl
            right[j] = yr
            if g < 1 {
                limited += 1
                g = min(1, g + mixer.limiterRecovery)
            }
            if !(abs(yl) <= 1) || !(abs(yr) <= 1) { clipped += 1 }
        }
        limiterGain = g
        if limited > 0 { limitedFrames.relaxedAdd(limited) }
        if clipped > 0 { clippedSamples.relaxedAdd(clipped) }
    }
}
