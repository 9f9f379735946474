import BellkeysEngine

// What sounds, in the engine playing and in the one a reload is letting ring out.
// Thread: control.
extension LivePlayer {
    /// Voices sounding in every engine, after the last period.
    public var voiceCount: Int {
        engine.voiceCount.load(ordering: .relaxed) + (previousEngine?.voiceCount.load(ordering: .relaxed) ?? 0)
    }

    /// Whether no bell sounds in any engine.
    public var isSilent: Bool {
        voiceCount == 0 && engine.roomIsQuiet.load(ordering: .relaxed)
            && previousEngine?.roomIsQuiet.load(ordering: .relaxed) ?? true
    }

    /// Whether `note` sounded at the end of the last period, in any engine.
    public func isSounding(note: Int) -> Bool {
        engine.isSounding(note: note) || previousEngine?.isSounding(note: note) == true
    }
}
