import Foundation
import Testing

/// The `bellkeys` binary built beside this test bundle.
let binary: String = {
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("bellkeys").path
}()

let repository: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

struct Run {
    var status: Int32
    var output: String
    var error: String
}

/// Runs bellkeys from a temporary folder (so nothing depends on the working directory), with
/// --no-config after a command that reads the settings files (unless `settings`: then they are
/// read, the test naming the user's through XDG_CONFIG_HOME in `environment`, and the system's,
/// unless `environment` names one, is a file that is not there: not this machine's /etc).
func bellkeys(
    _ arguments: [String], in folder: String? = nil, environment extra: [String: String] = [:], settings: Bool = false
) throws -> Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    let readsSettings = ["play", "demo", "render", "check"].contains(arguments.first ?? "")
    process.arguments =
        readsSettings && !settings && !arguments.contains("--help")
        ? [arguments[0], "--no-config"] + arguments.dropFirst() : arguments
    process.currentDirectoryURL = URL(fileURLWithPath: folder ?? NSTemporaryDirectory())
    var environment = ProcessInfo.processInfo.environment
    environment.removeValue(forKey: "BELLKEYS_SAMPLES")
    if settings, extra["BELLKEYS_SYSTEM_CONFIG"] == nil {
        environment["BELLKEYS_SYSTEM_CONFIG"] = "/nonexistent/bellkeys-test/bellkeys.conf"
    }
    environment.merge(extra) { $1 }
    process.environment = environment
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Run(
        status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
        error: String(decoding: errData, as: UTF8.self))
}

func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "bellkeys-cli-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

@Suite struct CommandLineUse {
    /// One version, from one place (Sources/bellkeys/Version.swift), which the package's
    /// changelog must name as its newest entry (Tools/build-deb refuses otherwise).
    @Test func versionComesFromOnePlaceAndTheChangelogAgrees() throws {
        let run = try bellkeys(["--version"])
        #expect(run.status == 0)
        let version = try String(contentsOfFile: repository + "/Sources/bellkeys/Version.swift", encoding: .utf8)
            .split(separator: "\"")[1]
        #expect(run.output == "bellkeys \(version)\n")
        let changelog = try String(contentsOfFile: repository + "/Tools/package/changelog", encoding: .utf8)
        #expect(changelog.hasPrefix("bellkeys (\(version)) "))
    }

    /// A binary built with another --scratch-path (or copied anywhere) still finds the bells of
    /// the checkout it was built from.
    @Test func aBinaryCopiedElsewhereFindsItsCheckoutsBells() throws {
        let folder = temporaryFolder()
        try FileManager.default.copyItem(atPath: binary, toPath: folder + "/bellkeys")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: folder + "/bellkeys")
        process.arguments = ["check"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "BELLKEYS_SAMPLES")
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(text.contains(repository + "/Samples/tags.json"))
    }

    @Test func everyExampleMapLoads() throws {
        let folder = repository + "/Samples/examples"
        let maps = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
        #expect(
            maps == [
                "bell-sets.json", "every-key.json", "gm-bells.json", "handbells.json", "plain.json", "tower-ring.json",
            ])
        for map in maps {
            let run = try bellkeys(["check", "--map", folder + "/" + map])
            if map == "gm-bells.json", !FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/FluidR3_GM.sf2") {
                // Without Debian's General MIDI font, the map says what to install.
                #expect(run.status == 1 && run.error.contains("sudo apt install fluid-soundfont-gm"), "\(run.error)")
                continue
            }
            #expect(run.status == 0, "\(map): \(run.error)")
        }
    }

    @Test func checkFindsTheBundledMapFromAnyFolder() throws {
        let run = try bellkeys(["check"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains(repository + "/Samples/tags.json"))
        for name in ["C4   60   100", "C#4  61   101", "C5   72   112"] { #expect(run.output.contains(name)) }
    }

    @Test func renderWritesADeterministicWAV() throws {
        let folder = temporaryFolder()
        let a = try bellkeys(["render", repository + "/Samples/demo.mid", "-o", "a.wav"], in: folder)
        let b = try bellkeys(["render", repository + "/Samples/demo.mid", "-o", "b.wav", "--quiet"], in: folder)
        #expect(a.status == 0 && b.status == 0, "\(a.error)\(b.error)")
        #expect(a.output.contains("0 samples clipped"))
        #expect(b.output.isEmpty)
        let dataA = try Data(contentsOf: URL(fileURLWithPath: folder + "/a.wav"))
        let dataB = try Data(contentsOf: URL(fileURLWithPath: folder + "/b.wav"))
        #expect(dataA == dataB)
        #expect(dataA.count > 44 + 20 * 48_000 * 4)
    }

    @Test func brokenMapGivesOneClearErrorAndExitStatus1() throws {
        let folder = temporaryFolder()
        try #"{"keys": [{"note": "C4", "sample": "x.wav", "gian": 2}]}"#
            .write(toFile: folder + "/bad.json", atomically: true, encoding: .utf8)
        let run = try bellkeys(["check", "--map", "bad.json"], in: folder)
        #expect(run.status == 1)
        #expect(run.error.contains("bellkeys: error: bad.json:1:53: keys[0].gian: unknown field \"gian\""))
        #expect(run.error.contains("did you mean \"gainDecibels\"?"))
        #expect(!run.error.contains("Fatal error"))
    }

    @Test func corruptMIDIFileGivesAClearError() throws {
        let folder = temporaryFolder()
        try Data([0x4D, 0x54, 0x68, 0x64, 0, 0, 0, 6, 0, 0, 0, 1, 0, 96, 0x4D, 0x54, 0x72, 0x6B, 0, 0, 0, 50, 0])
            .write(to: URL(fileURLWithPath: folder + "/cut.mid"))
        let run = try bellkeys(["render", "cut.mid", "-o", "out.wav"], in: folder)
        #expect(run.status == 1)
        #expect(
            run.error.hasPrefix("bellkeys: error: cut.mid: track 1 claims 50 bytes but only 1 remain (truncated file)"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/out.wav"))
    }

    @Test func missingInputAndUnwritableOutput() throws {
        let folder = temporaryFolder()
        let missing = try bellkeys(["render", "nope.mid", "-o", "out.wav"], in: folder)
        #expect(missing.status == 1)
        #expect(missing.error.contains("nope.mid: cannot open the MIDI file: No such file or directory"))
        let unwritable = try bellkeys(
            ["render", repository + "/Samples/demo.mid", "-o", "/nonexistent/out.wav"], in: folder)
        #expect(unwritable.status == 1)
        #expect(unwritable.error.contains("/nonexistent/out.wav: cannot create the WAV file"))
    }

    @Test func badOptionValuesAreRefusedBeforeAnyWork() throws {
        let run = try bellkeys(["render", "x.mid", "-o", "y.wav", "--format", "mp3"])
        #expect(run.status == 64)
        #expect(run.error.contains("--format mp3 is not one of s16, s24, s32, f32"))
    }

    @Test func helpDocumentsEveryOption() throws {
        let render = try bellkeys(["render", "--help"])
        for option in ["--output", "--map", "--rate", "--format", "--channels", "--polyphony", "--volume", "--quiet"] {
            #expect(render.output.contains(option), "render --help lacks \(option)")
        }
        let top = try bellkeys(["--help"])
        #expect(top.output.contains("render") && top.output.contains("check"))
    }

    /// On a machine without ALSA's kernel side (like the build machines), live playing and
    /// `list` say what is missing and what still works, with status 1 and no alsa-lib noise.
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/snd/seq")))
    func withoutSoundHardwareLivePlayingSaysWhatIsMissing() throws {
        // (A JACK server of the machine's, if any, is out of reach: it would play.)
        let noJACK = ["JACK_DEFAULT_SERVER": "bellkeys-no-such-server", "JACK_NO_START_SERVER": "1"]
        let play = try bellkeys([], environment: noJACK)
        #expect(play.status == 1)
        #expect(play.error.contains("/dev/snd/seq: cannot open the ALSA sequencer"))
        #expect(play.error.contains("this machine lacks both"))
        #expect(play.error.contains("bellkeys render FILE.mid -o out.wav"))
        #expect(!play.error.contains("ALSA lib") && !play.error.contains("Fatal error"))
        let list = try bellkeys(["list"], environment: noJACK)
        #expect(list.status == 1)
        #expect(list.output.contains("MIDI ports (for --connect):") && list.output.contains("null"))
        #expect(list.error.contains("this machine has no sound card;")) // Tools/play reads it
        #expect(list.output.contains("none: /dev/snd/seq: cannot open the ALSA sequencer"))
    }

    @Test func badLiveOptionsAreRefusedWithTheRange() throws {
        let run = try bellkeys(["--period", "4"])
        #expect(run.status == 64)
        #expect(run.error.contains("--period 4 is out of range; use 16 to 8192 frames"))
    }

    /// The JACK server sets the device, rate, buffer size and priority: asking for them with
    /// JACK is refused, saying why and what to do.
    @Test func alsaOptionsAreRefusedWithJACK() throws {
        let run = try bellkeys(["--driver", "jack", "--period", "128"])
        #expect(run.status == 64)
        #expect(run.error.contains("--period is an ALSA option; with --driver jack the JACK server sets"))
        #expect(run.error.contains("--driver alsa"))
        let connect = try bellkeys(["--driver", "alsa", "--jack-connect", "system:playback_1"])
        #expect(connect.status == 64)
        #expect(connect.error.contains("--jack-connect is a JACK option"))
    }

    /// With no JACK server (or no libjack at all), `--driver jack` says how to start one and
    /// that ALSA needs none; it never starts a server itself.
    @Test func jackWithoutAServerSaysHowToStartOne() throws {
        let run = try bellkeys(
            ["--driver", "jack", "--no-ui"], environment: ["JACK_DEFAULT_SERVER": "bellkeys-none-\(getpid())"])
        #expect(run.status == 1)
        #expect(run.error.contains("no JACK server 'bellkeys-none-") || run.error.contains("JACK is not installed"))
        #expect(run.error.contains("--driver alsa"))
        #expect(!run.error.contains("Fatal error") && !run.error.contains("Cannot connect"))
    }

    /// libjack is loaded at run time: the binary does not need it to start (a Raspberry Pi
    /// without JACK plays through ALSA; the VM tests run it on such a system).
    @Test func theBinaryDoesNotLinkLibjack() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        process.arguments = [binary]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text.contains("libasound") && text.contains("libsndfile"))
        #expect(!text.contains("libjack"))
    }
}
