import BellkeysFormats
import EngineTestSupport
import Foundation
import Testing

/// A harder strike is brighter: the spectral centroid of each bundled bell's first 0.5 s, struck
/// at velocity 30 and at 127, with the map's velocityTimbre.
@Suite struct VelocityTimbre {
    static let names = ["C4", "Cs4", "D4", "Ds4", "E4", "F4", "Fs4", "G4", "Gs4", "A4", "As4", "B4", "C5"]

    func writeMap(timbre: Double?, to path: String) throws {
        let keys = Self.names.enumerated().map {
            "{ \"tag\": \(100 + $0.offset), \"sample\": \"\(repository)/Samples/bell-\($0.element).wav\" }"
        }
        try
            ("{ " + (timbre.map { "\"velocityTimbre\": \($0), " } ?? "") + "\"keys\": [" + keys.joined(separator: ", ")
            + "] }")
            .write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The 13 bells one after the other, 13 s apart (the longest rings 12.6 s), all at `velocity`.
    func writeSong(velocity: UInt8, to path: String) throws {
        try Data(
            makeMIDIFile(
                ticksPerQuarter: 96,
                tracks: [(0..<13).map { (tick: $0 * 2_496, bytes: [0x90, UInt8(60 + $0), velocity]) }])
        )
        .write(to: URL(fileURLWithPath: path))
    }

    func render(_ map: String, _ song: String, _ out: String, in folder: String) throws -> [Float] {
        let run = try bellkeys(
            ["render", song, "-o", out, "--map", map, "--format", "f32", "--channels", "1", "-q"], in: folder)
        #expect(run.status == 0, "\(run.error)")
        return try wavData(folder + "/" + out).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The centroid (Hz) of the magnitude spectrum of `x` under a Hann window (a 32768-point FFT).
    func centroid(_ x: ArraySlice<Float>) -> Double {
        let size = 32_768
        var re = [Double](repeating: 0, count: size), im = [Double](repeating: 0, count: size)
        for (i, v) in x.enumerated() { re[i] = Double(v) * 0.5 * (1 - cos(2 * .pi * Double(i) / Double(x.count - 1))) }
        fourierTransform(&re, &im)
        var weighted = 0.0, total = 0.0
        for k in 0...size / 2 {
            let magnitude = (re[k] * re[k] + im[k] * im[k]).squareRoot()
            weighted += magnitude * Double(k) * 48_000 / Double(size)
            total += magnitude
        }
        return weighted / total
    }

    @Test func everyBundledBellIsBrighterStruckHarder() throws {
        let folder = temporaryFolder()
        try writeMap(timbre: 1, to: folder + "/timbre.json")
        try writeSong(velocity: 30, to: folder + "/soft.mid")
        try writeSong(velocity: 127, to: folder + "/hard.mid")
        let soft = try render("timbre.json", "soft.mid", "soft.wav", in: folder)
        let hard = try render("timbre.json", "hard.mid", "hard.wav", in: folder)
        var rises: [Double] = []
        for k in 0..<13 {
            let start = k * 624_000
            let rise = centroid(hard[start..<start + 24_000]) / centroid(soft[start..<start + 24_000]) - 1
            rises.append(rise)
            #expect(rise >= 0.10, "bell \(Self.names[k]): the centroid rises \(rise) from velocity 30 to 127")
            #expect(rise > 0.20 && rise < 0.26, "docs/map.md says 21 to 25 %: \(rise)")
        }
        print(
            "velocity timbre: centroid rise from velocity 30 to 127, bell by bell: "
                + rises.map { "\(Int(($0 * 100).rounded())) %" }.joined(separator: ", "))
    }

    /// Without velocityTimbre, a soft strike is the hard one turned down (the same centroid),
    /// and at velocity 127 the filter is open: the same bytes with it or without it.
    @Test func offItIsTodaysTimbreAndAtFullVelocityTheSameBytes() throws {
        let folder = temporaryFolder()
        try writeMap(timbre: nil, to: folder + "/plain.json")
        try writeMap(timbre: 1, to: folder + "/timbre.json")
        try writeSong(velocity: 30, to: folder + "/soft.mid")
        try writeSong(velocity: 127, to: folder + "/hard.mid")
        let soft = try render("plain.json", "soft.mid", "soft.wav", in: folder)
        let hard = try render("plain.json", "hard.mid", "hard.wav", in: folder)
        let open = try render("timbre.json", "hard.mid", "open.wav", in: folder)
        #expect(hard == open)
        for k in [0, 6, 12] {
            let start = k * 336_000
            let a = centroid(hard[start..<start + 24_000]), b = centroid(soft[start..<start + 24_000])
            #expect(abs(a / b - 1) < 1e-3, "bell \(Self.names[k]): \(a) against \(b) Hz")
        }
    }
}
