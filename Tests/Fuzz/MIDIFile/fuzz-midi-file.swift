import FuzzChecks
import Glibc

// Built with libFuzzer by Tests/Fuzz/run (-sanitize=fuzzer,address -DFUZZING); built plainly,
// it replays the inputs named on its command line: swift run fuzz-midi-file Tests/Fuzz/Corpus/midi-file

#if FUZZING
import CFuzzer

// SwiftPM links an executable's main to <module>_main, so the entry calls libFuzzer's driver.
@_cdecl("fuzz_midi_file_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        let broken = midiFileViolations(Array(UnsafeBufferPointer(start: data, count: size)))
        if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
        return 0
    }
}
#else
@main struct Replay {
    static func main() {
        exit(replay(Array(CommandLine.arguments.dropFirst()), through: midiFileViolations))
    }
}
#endif
