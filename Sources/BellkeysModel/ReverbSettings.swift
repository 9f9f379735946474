// The reverb as a map and a teacher choose it: the presets (a room, a hall, a church), and the
// settings an instrument carries (a preset and a mix). Their design figures are the engine's
// (Reverb.swift).

/// The room the bells ring in, as a teacher names it.
public enum ReverbPreset: String, Sendable, CaseIterable {
    /// No reverb: the dry bells, today's bytes.
    case off
    /// A classroom: short and close.
    case room
    /// A concert hall.
    case hall
    /// A stone church: the long ring of a tower's bells.
    case church
}

/// The reverb of an instrument: which room, and how loud its sound is against the bells'.
public struct ReverbSettings: Sendable, Equatable {
    public var preset: ReverbPreset
    /// The reverb's output level, 0 to 1, on top of the dry bells (which never change).
    public var mix: Double

    public static let off = ReverbSettings(preset: .off, mix: 0)
    public static let defaultMix = 0.3

    public init(preset: ReverbPreset, mix: Double = ReverbSettings.defaultMix) {
        self.preset = preset
        self.mix = mix
    }

    /// These bells in the room `preset` (`--reverb`, `r`, the teacher's page), at their own mix:
    /// the map's `reverbMix`, else the default (an instrument without a room, an SFZ file's or a
    /// SoundFont's, has the default mix, `Instrument.init`).
    public func inRoom(_ preset: ReverbPreset) -> ReverbSettings { ReverbSettings(preset: preset, mix: mix) }
}

extension ReverbSettings {
    /// These settings as one of an engine's rooms: every dry setting (no preset, or no mix) is
    /// the one dry room.
    public var asRoom: ReverbSettings { preset == .off || mix <= 0 ? .off : self }
}
