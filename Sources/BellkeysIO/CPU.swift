import CLinux
import Glibc

/// Whether the engine can mix with its AVX2 loop here (`EngineConfiguration.wideMixing`): the
/// CPU runs x86-64-v3 code (Intel since Haswell, 2013; AMD since Excavator, 2015), and the
/// environment does not say `BELLKEYS_MIX=portable`, which keeps the loop every x86-64 CPU runs
/// (the same bytes; for comparing the two). Thread: any.
public func wideMixingAvailable() -> Bool {
    if let choice = getenv("BELLKEYS_MIX"), String(cString: choice) == "portable" { return false }
    return bellkeys_cpu_runs_x86_64_v3() != 0
}
