import Glibc

// The process's memory: locked for a live session, measured for reports.

/// Locks the process's memory (the sample bank among it) so the render thread never waits for
/// a page to come back from swap. Returns nil on success, else the errno of `mlockall`.
/// Thread: control.
public func lockMemory() -> Int32? {
    mlockall(MCL_CURRENT) == 0 ? nil : errno
}

/// Resident and peak resident memory of this process in bytes, from /proc/self/status.
public func residentMemory() -> (current: Int, peak: Int) {
    guard let bytes = try? readFile("/proc/self/status") else { return (0, 0) }
    var current = 0, peak = 0
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count >= 2, let kb = Int(parts[1]) else { continue }
        if parts[0] == "VmRSS:" { current = kb * 1024 }
        if parts[0] == "VmHWM:" { peak = kb * 1024 }
    }
    return (current, peak)
}
