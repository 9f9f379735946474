import BellkeysModel

extension Instrument {
    /// What it holds, in words for a start-up, reload or `check` line: a map's keys as
    /// "13 bells (C4..C5)"; an instrument of regions (an SFZ file's, a SoundFont preset's, with a
    /// map's keys beside them or not) as "6 regions, 6 samples (G4..C7)", its regions counted
    /// without the keys and its samples with them. Thread: any.
    public var contentsText: String {
        let range = playableRange.map { " (\(noteName($0.lowerBound))..\(noteName($0.upperBound)))" } ?? ""
        guard regions.count > bellCount else { return "\(bellCount) bells" + range }
        // The samples its regions play (a set's bank holds the other sets' too).
        let samples = Set(regions.map(\.sampleIndex)).count
        let count = regions.count - bellCount
        return "\(count) region\(count == 1 ? "" : "s"), \(samples) sample\(samples == 1 ? "" : "s")" + range
    }

    /// The lowest and highest key any region answers (release samples' too), or nil.
    public var playableRange: ClosedRange<Int>? {
        guard let low = regions.map(\.keyRange.lowerBound).min(), let high = regions.map(\.keyRange.upperBound).max()
        else { return nil }
        return max(0, low)...min(127, high)
    }
}
