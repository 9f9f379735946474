// Numbers as bellkeys' reports write them, shared by the session and the drivers.

/// "+3.0 dB", "-12.5 dB": a volume for the status line and messages. Thread: any.
public func decibelsText(_ db: Double) -> String {
    let rounded = (db * 10).rounded() / 10
    return (rounded > 0 ? "+" : "") + (rounded == rounded.rounded() ? "\(Int(rounded)).0" : "\(rounded)") + " dB"
}

/// `s` with exactly `digits` decimals ("1.50"), for reports. Thread: any.
public func secondsText(_ s: Double, digits: Int = 2) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let v = (s * scale).rounded() / scale
    var text = "\(v)"
    let decimals = text.split(separator: ".").last?.count ?? 0
    if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
    return text
}

/// `s` padded with spaces to `n` characters, or followed by one space if it is that long
/// already: a column of a report. Thread: any.
public func pad(_ s: String, _ n: Int) -> String {
    s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
}
