// The SFZ 1 modulation opcodes bellkeys reads: the envelopes of pitch and cutoff
// (`pitcheg_*`, `fileg_*`) and the LFOs of level, pitch and cutoff (`amplfo_*`, `pitchlfo_*`,
// `fillfo_*`), with sfizz's units and defaults. sfizz takes any value; bellkeys refuses one
// outside the ranges below, which hold what the opcodes mean (the error's fix names the range).

extension SFZInstrumentBuilder {
    /// One of the modulation opcodes, or nil if `op` is not one.
    mutating func modulationOpcode(_ op: SFZOpcode) -> SFZMeaning? {
        for (prefix, path) in [
            ("pitcheg_", \SFZRegionDraft.region.pitchEG), ("fileg_", \SFZRegionDraft.region.filterEG),
        ] where op.name.hasPrefix(prefix) {
            return envelopeOpcode(op, String(op.name.dropFirst(prefix.count)), path)
        }
        for (prefix, path, unit) in [
            ("amplfo_", \SFZRegionDraft.region.amplitudeLFO, "dB"),
            ("pitchlfo_", \SFZRegionDraft.region.pitchLFO, "cents"),
            ("fillfo_", \SFZRegionDraft.region.filterLFO, "cents"),
        ] where op.name.hasPrefix(prefix) {
            return lfoOpcode(op, String(op.name.dropFirst(prefix.count)), path, depthUnit: unit)
        }
        return nil
    }

    private mutating func envelopeOpcode(
        _ op: SFZOpcode, _ name: String, _ path: WritableKeyPath<SFZRegionDraft, SFZEnvelopeOpcodes>
    ) -> SFZMeaning {
        let field: WritableKeyPath<SFZEnvelopeOpcodes, Double>
        var range = 0.0...100, unit = "seconds"
        switch name {
        case "delay": field = \.delay
        case "attack": field = \.attack
        case "hold": field = \.hold
        case "decay": field = \.decay
        case "release": field = \.release
        case "start": (field, unit) = (\.start, "percent")
        case "sustain": (field, unit) = (\.sustain, "percent")
        case "depth": (field, range, unit) = (\.depth, -12_000...12_000, "cents")
        case "vel2depth", "veltodepth": (field, range, unit) = (\.velToDepth, -12_000...12_000, "cents")
        default: return .unsupported
        }
        guard let value = number(op, range, unit: unit) else { return .invalid }
        return .set { $0[keyPath: path.appending(path: field)] = value }
    }

    private mutating func lfoOpcode(
        _ op: SFZOpcode, _ name: String, _ path: WritableKeyPath<SFZRegionDraft, SFZLFOOpcodes>, depthUnit: String
    ) -> SFZMeaning {
        if name == "wave" {
            guard let wave = integer(op, 0...12, unit: "") else { return .invalid }
            return .set { $0[keyPath: path].wave = wave }
        }
        let field: WritableKeyPath<SFZLFOOpcodes, Double>
        var range = 0.0...100, unit = "seconds"
        switch name {
        case "freq": (field, unit) = (\.frequency, "Hz")
        case "delay": field = \.delay
        case "fade": field = \.fade
        case "depth": (field, range, unit) = (\.depth, depthUnit == "dB" ? -96...96 : -12_000...12_000, depthUnit)
        default: return .unsupported
        }
        guard let value = number(op, range, unit: unit) else { return .invalid }
        return .set { $0[keyPath: path.appending(path: field)] = value }
    }
}
