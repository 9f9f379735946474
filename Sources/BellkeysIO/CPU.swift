import CLinux
import Glibc

/// Whether this CPU runs the engine's AVX2 mixing loop: x86-64-v3 code (Intel since Haswell,
/// 2013; AMD since Excavator, 2015). Thread: any.
public func cpuRunsWideMixing() -> Bool { bellkeys_cpu_runs_x86_64_v3() != 0 }

/// Whether the engine mixes with its AVX2 loop (`EngineConfiguration.wideMixing`): only when
/// asked, `BELLKEYS_MIX=wide`, on a CPU that runs it. Opt-in for now: in its first CI run the
/// JACK load test found bellkeys late in more cycles than its twin with it on (33 against 8), not
/// yet explained; the loop gives the same bytes either way. Thread: any.
public func wideMixingAvailable() -> Bool {
    guard let choice = getenv("BELLKEYS_MIX"), String(cString: choice) == "wide" else { return false }
    return cpuRunsWideMixing()
}
