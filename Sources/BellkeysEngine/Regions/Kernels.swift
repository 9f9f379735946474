import BellkeysModel

/// One interpolation kernel as the render thread reads it: `rows` phases of `taps`
/// coefficients, each row followed by its difference to the next phase (so a phase between two
/// rows is `c + w × d`).
struct KernelLevel {
    var coefficients: UnsafePointer<Float>
    var taps: Int
    /// Playback ratios up to this (32.32 fixed point) use this level.
    var highestIncrement: UInt64
    /// Where the render thread widens a voice's frames for `interpolate` (PitchLoops.swift):
    /// one workspace, shared by every level of an engine's kernels.
    var workspace: UnsafeMutablePointer<Float>
}

/// The windowed-sinc kernels of one quality level, at unit stretch and stretched in quarter
/// octaves for voices played above their sample's pitch.
///
/// A voice at ratio r ≤ 1 (at or below its sample's pitch) reads the unit kernel: a sinc with
/// its cutoff at `cutoff` × the sample's rate, under a Kaiser window of `taps` taps. A voice at
/// r > 1 would fold the sample's top into the output band, so it reads the kernel stretched by
/// the next quarter octave s ≥ r: cutoff ÷ s, taps × s (Smith's band-limited interpolation,
/// with the stretch rounded up so a level is shared by a quarter octave of ratios). Stretch is
/// capped where the kernel would pass 256 taps; above that cap (more than 4 octaves up at the
/// default quality) the top of the sample may alias.
///
/// Each kernel is tabulated at 256 phases per sample with linear interpolation between them,
/// and every phase is normalised to a DC gain of exactly 1.
/// Thread: built on the control thread; read-only afterwards.
public final class InterpolationKernels: @unchecked Sendable {
    public let quality: InterpolationQuality
    /// Phases tabulated per input sample.
    static let phaseBits = 8
    static let rowCount = 1 << phaseBits
    /// The most taps any kernel has.
    public static let maximumTaps = 256
    let levels: UnsafeMutablePointer<KernelLevel>
    let levelCount: Int
    private var storage: [UnsafeMutablePointer<Float>] = []
    /// The render thread's workspace (`KernelLevel.workspace`): written while it renders, so one
    /// engine's kernels are never shared with another engine.
    private let workspace: UnsafeMutablePointer<Float>

    /// The kernels of `quality`, stretched far enough for every ratio up to `highestRatio`.
    public init(quality: InterpolationQuality, highestRatio: Double) {
        self.quality = quality
        let (beta, cutoff) = InterpolationKernels.design(quality)
        let workspaceFloats = 2 * pitchWindowFrames + pitchStashFloats
        workspace = InterpolationKernels.allocateLines(floats: workspaceFloats)
        workspace.initialize(repeating: 0, count: workspaceFloats)
        var made: [KernelLevel] = []
        var k = 0
        while true {
            let stretch = exp2(Double(k) / 4)
            let taps = (Int((Double(quality.taps) * stretch).rounded(.up)) + 7) / 8 * 8
            if taps > InterpolationKernels.maximumTaps { break }
            let table = InterpolationKernels.tabulate(
                taps: taps, stretch: stretch, cutoff: cutoff, beta: beta)
            storage.append(table)
            let ceiling = stretch * 4_294_967_296
            made.append(
                KernelLevel(
                    coefficients: UnsafePointer(table), taps: taps,
                    highestIncrement: ceiling >= 1.8e19 ? .max : UInt64(ceiling), workspace: workspace))
            if stretch >= highestRatio { break }
            k += 1
        }
        made[made.count - 1].highestIncrement = .max
        levelCount = made.count
        levels = .allocate(capacity: made.count)
        levels.initialize(from: made, count: made.count)
    }

    deinit {
        for table in storage { UnsafeMutableRawPointer(table).deallocate() }
        levels.deallocate()
        UnsafeMutableRawPointer(workspace).deallocate()
    }

    /// Bytes of the tables (for reports).
    public var byteCount: Int {
        (0..<levelCount).reduce(0) { $0 + levels[$1].taps * 2 * InterpolationKernels.rowCount * 4 }
    }

    /// Taps of the kernel a voice at `ratio` reads.
    public func taps(ratio: Double) -> Int {
        levels[level(increment: UInt64((ratio * 4_294_967_296).rounded()))].taps
    }

    /// The level for a 32.32 increment. Thread: any. Real-time safe.
    @_noLocks
    func level(increment: UInt64) -> Int {
        var k = 0
        while k < levelCount - 1, increment > levels[k].highestIncrement { k += 1 }
        return k
    }

    /// Kaiser β and cutoff (a fraction of the sample's rate) of each level: chosen so that
    /// images of content up to 9 kHz (fast), 17 kHz (good) and 20 kHz (best) at 48 kHz lie
    /// 70 dB down or more (docs/design/interpolation.md).
    static func design(_ quality: InterpolationQuality) -> (beta: Double, cutoff: Double) {
        switch quality {
        case .fast: (7, 0.40)
        case .good: (8.6, 0.45)
        case .best: (10, 0.47)
        }
    }

    /// `floats` floats starting on a cache line, so that no row of a kernel (a multiple of 32
    /// bytes) straddles two lines.
    static func allocateLines(floats: Int) -> UnsafeMutablePointer<Float> {
        UnsafeMutableRawPointer.allocate(byteCount: floats * 4, alignment: 64).bindMemory(
            to: Float.self, capacity: floats)
    }

    /// 256 rows of `taps` coefficients and their differences to the next row, interleaved.
    static func tabulate(taps: Int, stretch: Double, cutoff: Double, beta: Double) -> UnsafeMutablePointer<Float> {
        let rows = rowCount
        var exact = [[Double]](repeating: [], count: rows + 1)
        let half = Double(taps) / 2
        let scaledCutoff = cutoff / stretch
        let window0 = besselI0(beta)
        // The kernel at t = j / rows (exact in binary), for j = 0 ... rows × half: it is even
        // (sinc and the window give -t the same bits as t), and row r's tap k is at
        // j = rows (k - half + 1) - r, so each value is computed once.
        let reach = rows * taps / 2
        let atStep = (0...reach).map { j -> Double in
            let t = Double(j) / Double(rows)
            let x = t / half
            let window = abs(x) >= 1 ? 0 : besselI0(beta * (1 - x * x).squareRoot()) / window0
            return 2 * scaledCutoff * sinc(2 * scaledCutoff * t) * window
        }
        for r in 0...rows {
            var row = [Double](repeating: 0, count: taps)
            var sum = 0.0
            for k in 0..<taps {
                let v = atStep[min(reach, abs(rows * (k - taps / 2 + 1) - r))]
                row[k] = v
                sum += v
            }
            for k in 0..<taps { row[k] /= sum }
            exact[r] = row
        }
        let table = allocateLines(floats: rows * 2 * taps)
        for r in 0..<rows {
            for k in 0..<taps {
                let c = Float(exact[r][k])
                table[r * 2 * taps + k] = c
                table[r * 2 * taps + taps + k] = Float(exact[r + 1][k]) - c
            }
        }
        return table
    }
}

/// sin(πx)/(πx), 1 at 0 (control thread).
func sinc(_ x: Double) -> Double {
    if x == 0 { return 1 }
    return sine(3.141_592_653_589_793 * x) / (3.141_592_653_589_793 * x)
}

/// sin x for any finite x, without Foundation (control thread).
func sine(_ x: Double) -> Double {
    let twoPi = 6.283_185_307_179_586
    var y = x - (x / twoPi).rounded() * twoPi // -π...π
    var sign = 1.0
    if y < 0 {
        y = -y
        sign = -1
    }
    if y > 1.570_796_326_794_896_6 { y = 3.141_592_653_589_793 - y }
    return sign * sineCosine(y).sine
}

/// The modified Bessel function of the first kind, order 0 (control thread).
func besselI0(_ x: Double) -> Double {
    var sum = 1.0, term = 1.0
    let q = x * x / 4
    for k in 1...60 {
        term *= q / Double(k * k)
        sum += term
        if term < sum * 1e-17 { break }
    }
    return sum
}
