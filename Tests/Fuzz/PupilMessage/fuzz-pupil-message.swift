import FuzzChecks
import Glibc

// Built with libFuzzer by Tests/Fuzz/run (-sanitize=fuzzer,address -DFUZZING); built plainly,
// it replays the inputs named on its command line: swift run fuzz-pupil-message Tests/Fuzz/Corpus/pupil-message

#if FUZZING
// SwiftPM links an executable's main to <module>_main; this one starts libFuzzer's driver.
@_cdecl("fuzz_pupil_message_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, rules: pupilMessageViolations)
}
#else
@main struct Replay {
    static func main() { exit(replay(Array(CommandLine.arguments.dropFirst()), through: pupilMessageViolations)) }
}
#endif
