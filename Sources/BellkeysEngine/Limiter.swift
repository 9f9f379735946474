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
                y = x < 0 ? -threshold : threshold     // x * g could round one ulp past it
            } else {
                y = x * g
            }
            output[j] = y
            if g < 1 {
                limited += 1
                g = min(1, g + limiterRecovery)
            }
            if !(abs(y) <= 1) { clipped += 1 }
        }
        limiterGain = g
        if limited > 0 { limitedFrames.wrappingAdd(limited, ordering: .relaxed) }
        if clipped > 0 { clippedSamples.wrappingAdd(clipped, ordering: .relaxed) }
    }
}
