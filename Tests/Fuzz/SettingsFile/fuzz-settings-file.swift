import FuzzChecks
import Glibc

// Built with libFuzzer by Tests/Fuzz/run (-sanitize=fuzzer,address -DFUZZING); built plainly,
// it replays the inputs named on its command line: swift run fuzz-settings-file Tests/Fuzz/Corpus/settings-file

#if FUZZING
// SwiftPM links an executable's main to <module>_main; this one starts libFuzzer's driver.
@_cdecl("fuzz_settings_file_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, rules: settingsFileViolations)
}
#else
@main struct Replay {
    static func main() { exit(replay(Array(CommandLine.arguments.dropFirst()), through: settingsFileViolations)) }
}
#endif
