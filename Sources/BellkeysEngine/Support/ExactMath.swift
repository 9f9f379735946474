import BellkeysModel

// 2^x and sin/cos without Foundation: the model's (Instrument.swift), under the engine's names.

/// 2^x (control thread).
func exp2(_ x: Double) -> Double { exactExp2(x) }

/// sin and cos of `x` in 0...π/2. Thread: any. Real-time safe.
@_noLocks
func sineCosine(_ x: Double) -> (sine: Double, cosine: Double) { exactSineCosine(x) }
