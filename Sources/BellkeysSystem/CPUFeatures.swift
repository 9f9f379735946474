import CLinux
import Glibc

/// Whether this CPU runs the engine's AVX2 mixing loop: x86-64-v3 code (Intel since Haswell,
/// 2013; AMD since Excavator, 2015). Thread: any.
public func cpuRunsWideMixing() -> Bool { bellkeys_cpu_runs_x86_64_v3() != 0 }

/// Whether the engine mixes with its AVX2 loop (`EngineConfiguration.wideMixing`): on a CPU that
/// runs it, unless `BELLKEYS_MIX=portable` asks for the loop every x86-64 CPU runs. Both give the
/// same bytes (the `WideMixing` tests); the AVX2 one about 1.85 times the voices. (It was opt-in
/// in 0.3.0's first builds while the JACK load test found bellkeys late in more cycles than its
/// twin with it on; that test's twin then did half bellkeys' work, and it failed the same way
/// with the portable loop: docs/design/jack-timing.md.) Thread: any.
public func wideMixingAvailable() -> Bool {
    if let choice = getenv("BELLKEYS_MIX"), String(cString: choice) == "portable" { return false }
    return cpuRunsWideMixing()
}
