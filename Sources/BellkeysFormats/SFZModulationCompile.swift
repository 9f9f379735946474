import BellkeysModel

// An SFZ region's envelopes of pitch and cutoff and its LFOs, onto the engine's modulation
// sources by sfizz's rules (`ModulationRules.sfz`): `pitcheg` (or `fileg` alone) is the
// envelope, `fileg` beside `pitcheg` the cutoff's own; `amplfo` the modulation LFO (to the
// level only), `pitchlfo` the vibrato, `fillfo` the filter LFO.

extension CompiledSFZ {
    /// `sfz`'s modulation, nil if it has none, and the note-on modulators its `*_vel2depth`
    /// need (velocity / 127 × the amount, to the envelope's depth). `warn` takes what is left
    /// out.
    func modulation(_ sfz: SFZRegion, warn: (String) -> Void) -> (VoiceModulation?, [Modulator]) {
        let filtered = sfz.cutoff != nil && sfz.filterType == .lowPass2
        let cutoffSources = [(sfz.filterEG.isUsed, "fileg"), (sfz.filterLFO.depth != 0, "fillfo")].filter(\.0).map(\.1)
        if !cutoffSources.isEmpty, !filtered {
            let names = cutoffSources.joined(separator: " and ")
            warn(
                sfz.cutoff == nil
                    ? "\(names) move\(cutoffSources.count == 1 ? "s" : "") a filter's cutoff, and this region has none (no cutoff): nothing moves, as in sfizz"
                    : "\(names) \(cutoffSources.count == 1 ? "is" : "are") left out on a one-pole filter (fil_type=lpf_1p): bellkeys moves the cutoff of lpf_2p only"
            )
        }
        func wave(_ lfo: SFZLFOOpcodes, _ name: String) -> LFOWave? {
            if let wave = LFOWave(rawValue: lfo.wave) { return wave }
            warn(
                lfo.wave == 12
                    ? "\(name)_wave=12 (random steps) is left out: that LFO is still"
                    : "\(name)_wave=\(lfo.wave) is no wave: that LFO is still, as in sfizz (the waves are 0 to 7)")
            return nil
        }
        let pitchEG = sfz.pitchEG.isUsed, filterEG = filtered && sfz.filterEG.isUsed
        let ampLFO = sfz.amplitudeLFO.depth != 0 ? wave(sfz.amplitudeLFO, "amplfo") : nil
        let pitchLFO = sfz.pitchLFO.depth != 0 ? wave(sfz.pitchLFO, "pitchlfo") : nil
        let filterLFO = filtered && sfz.filterLFO.depth != 0 ? wave(sfz.filterLFO, "fillfo") : nil
        guard pitchEG || filterEG || ampLFO != nil || pitchLFO != nil || filterLFO != nil else { return (nil, []) }

        var m = VoiceModulation(cutoffRange: 1...20_000)
        m.rules = .sfz
        m.envelope = envelope(pitchEG ? sfz.pitchEG : sfz.filterEG)
        if pitchEG, filterEG { m.cutoffEnvelope = envelope(sfz.filterEG) }
        var modulators: [Modulator] = []
        let velocity = (0..<128).map { Double($0) / 127 }
        // An envelope's depth, its `vel2depth` a modulator to it.
        func depth(_ e: SFZEnvelopeOpcodes, _ destination: ModulatorDestination) -> Double {
            if e.velToDepth != 0 {
                modulators.append(
                    Modulator(source: .velocity, curve: velocity, amount: e.velToDepth, destination: destination))
            }
            return e.depth
        }
        if pitchEG { m.envelopeToPitchCents = depth(sfz.pitchEG, .envelopeToPitchCents) }
        if filterEG { m.envelopeToCutoffCents = depth(sfz.filterEG, .envelopeToCutoffCents) }
        if let ampLFO {
            m.modulationLFO = lfo(sfz.amplitudeLFO, ampLFO)
            m.modulationLFOToVolumeDecibels = sfz.amplitudeLFO.depth
        }
        if let pitchLFO {
            m.vibratoLFO = lfo(sfz.pitchLFO, pitchLFO)
            m.vibratoLFOToPitchCents = sfz.pitchLFO.depth
        }
        if let filterLFO {
            m.filterLFO = lfo(sfz.filterLFO, filterLFO)
            m.filterLFOToCutoffCents = sfz.filterLFO.depth
        }
        return (m, modulators)
    }

    private func envelope(_ e: SFZEnvelopeOpcodes) -> ModulationEnvelope {
        var envelope = ModulationEnvelope(
            delay: e.delay, attack: e.attack, hold: e.hold, decay: e.decay, sustain: e.sustain / 100,
            release: e.release)
        envelope.start = e.start / 100
        return envelope
    }

    private func lfo(_ l: SFZLFOOpcodes, _ wave: LFOWave) -> ModulationLFO {
        var lfo = ModulationLFO(delay: l.delay, frequency: l.frequency)
        lfo.wave = wave
        lfo.fade = l.fade
        return lfo
    }
}
