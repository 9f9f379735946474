// Keeping decaying values out of the subnormal range, where a CPU slows down many times: the
// scalar `flush` of the reverb's diffusers and the filtered voices' low-passes (the vector code
// writes the same sum and difference inline).

/// `x` with anything under about 1e-25 rounded to exactly 0 (adding and taking away 1e-18;
/// the compiler keeps both, as IEEE arithmetic requires). Real-time safe.
@_noLocks
@inline(__always)
func flush(_ x: Float) -> Float { (x + 1e-18) - 1e-18 }
