/// LLVM's prefetch intrinsic: asks the CPU to start loading a cache line now.
/// Declared `@_noLocks` so the real-time check accepts it; it compiles to one instruction
/// (`prefetcht0`/`prefetcht1` on x86-64, `prfm` on ARM64) and never faults, so an address past
/// the end of a sample is harmless.
@_noLocks
@_silgen_name("llvm.prefetch.p0")
func llvmPrefetch(_ address: UnsafeRawPointer, _ write: Int32, _ locality: Int32, _ cacheType: Int32)

/// Prefetches `byteCount` bytes from `address` into the cache levels nearest the core.
/// Thread: any (render thread in practice). Real-time safe.
@_noLocks
@inline(__always)
func prefetch(_ address: UnsafeRawPointer, byteCount: Int) {
    // ThreadSanitizer wraps calls in unwinding code, and LLVM rejects an intrinsic called
    // that way; sanitizer builds (-DBELLKEYS_NO_PREFETCH) do without the hint. The hint is
    // given on the two architectures whose lowering was checked (x86-64: prefetcht1; arm64:
    // prfm pldl2keep; see docs/install.md, arm64) and whose cache lines are 64 bytes; elsewhere
    // the mix runs without it, the same samples a little slower.
    #if !BELLKEYS_NO_PREFETCH && (arch(x86_64) || arch(arm64))
    var offset = 0
    while offset < byteCount {
        llvmPrefetch(address + offset, 0, 2, 1)
        offset += 64
    }
    #endif
}
