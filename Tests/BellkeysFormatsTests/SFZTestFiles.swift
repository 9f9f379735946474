import BellkeysFormats
import Testing

/// The VSCO 2 Community Edition's tubular bells and glockenspiel, byte for byte:
/// sgossner/VSCO-2-CE at 2f56e6e, `TubularBells.sfz` (621 bytes) and `Glockenspiel.sfz` (790 bytes).
/// Their terms (Readme.txt, "2. Terms"; CC0): "You are permitted to use these samples for ANY purpose".
let vscoTubularBells = #"""
    <control>


    default_path=Percussion\


    <global>




    ampeg_attack=0.001


    ampeg_release=15


    ampeg_dynamic=1




    volume=0




    <group> //Begin Group 1




    seq_length=1


    seq_position=1


    group_label=gr_1






    <region>
    sample=TB_hit_F5_v3_rr1.wav
    lokey=75
    hikey=79
    pitch_keycenter=77
    lovel=0
    hivel=127
    volume=16


    <region>
    sample=TB_hit_C4_v4_rr1.wav
    lokey=60
    hikey=63
    pitch_keycenter=60
    lovel=0
    hivel=127
    volume=6


    <region>
    sample=TB_hit_C5_v4_rr1.wav
    lokey=70
    hikey=74
    pitch_keycenter=72
    lovel=0
    hivel=127
    volume=6


    <region>
    sample=TB_hit_G4_v4_rr1.wav
    lokey=64
    hikey=69
    pitch_keycenter=67
    lovel=0
    hivel=127
    volume=6



    """#

let vscoGlockenspiel = #"""
    <control>


    default_path=Percussion\Glock\


    <global>




    ampeg_attack=0.005


    ampeg_release=7


    ampeg_dynamic=1




    volume=0




    <group> //Begin Group for entire instrument




    <region>
    sample=glock_medium_C5.wav
    lokey=70
    hikey=75
    pitch_keycenter=72
    lovel=0
    hivel=127
    volume=8


    <region>
    sample=glock_medium_C6.wav
    lokey=82
    hikey=87
    pitch_keycenter=84
    lovel=0
    hivel=127
    volume=8


    <region>
    sample=glock_medium_C7.wav
    lokey=94
    hikey=96
    pitch_keycenter=96
    lovel=0
    hivel=127
    volume=8


    <region>
    sample=glock_medium_G4.wav
    lokey=67
    hikey=69
    pitch_keycenter=67
    lovel=0
    hivel=127
    volume=8


    <region>
    sample=glock_medium_G5.wav
    lokey=76
    hikey=81
    pitch_keycenter=79
    lovel=0
    hivel=127
    volume=8


    <region>
    sample=glock_medium_G6.wav
    lokey=88
    hikey=93
    pitch_keycenter=91
    lovel=0
    hivel=127
    volume=8



    """#

/// A file in the shape of sgossner/VCSL's generated .sfz files (CC0), written for these tests: no
/// <control>, a // comment first, paths with spaces and '#', six-decimal and negative volumes,
/// tune, offset, and a velocity crossfade over three layers.
let vcslShaped = """
    // Generation Options: --release 30 --volume 4 --crossfade

    <group>
    ampeg_attack=0.004000
    ampeg_release=30.000000

    <region>
    xfout_lovel=0
    xfout_hivel=83
    sample=Hand Bells 1/handbell_F#4_p_rr1.wav
    pitch_keycenter=66
    lokey=65
    hikey=67
    tune=-19
    volume=14.124176

    <region>
    xfin_lovel=0
    xfin_hivel=83
    xfout_lovel=84
    xfout_hivel=127
    sample=Hand Bells 1/handbell_F#4_mf_rr2.wav
    pitch_keycenter=66
    lokey=65
    hikey=67
    offset=135
    volume=-0.566385

    <region>
    xfin_lovel=84
    xfin_hivel=127
    sample=Hand Bells 1/handbell_F#4_ff_rr1.wav
    pitch_keycenter=66
    lokey=65
    hikey=67
    volume=-4.305226

    <region>
    sample=Hand Bells 1/handbell_G#4_ff_rr1.wav
    pitch_keycenter=68
    lokey=68
    hikey=70
    tune=16
    volume=30.736268

    """

/// Reads `text` as `file`; #include reads from `files`.
func parseSFZText(
    _ text: String, file: String = "bells.sfz", files: [String: String] = [:]
) throws(InstrumentError) -> SFZInstrumentDescription {
    try parseSFZ(Array(text.utf8), file: file) { path in
        guard let included = files[path] else { throw NoSuchFile() }
        return Array(included.utf8)
    }
}

struct NoSuchFile: Error, CustomStringConvertible {
    var description: String { "no such file" }
}

/// The problems of a file that must fail (empty if it was accepted).
func sfzProblems(_ text: String, file: String = "bells.sfz", files: [String: String] = [:]) -> [InstrumentProblem] {
    do {
        _ = try parseSFZText(text, file: file, files: files)
        return []
    } catch {
        return error.problems
    }
}

func at(_ line: Int, _ column: Int, _ file: String = "bells.sfz") -> SFZLocation {
    SFZLocation(file: file, line: line, column: column)
}

/// A region as a test expects it: the defaults, then `change`.
func region(
    _ location: SFZLocation, _ sample: String, _ sampleLocation: SFZLocation,
    _ change: (inout SFZRegion) -> Void = { _ in }
) -> SFZRegion {
    var r = SFZRegion(location: location, sample: sample, sampleLocation: sampleLocation)
    change(&r)
    return r
}
