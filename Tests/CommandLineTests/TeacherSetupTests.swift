import ArgumentParser
import BellkeysFormats
import Foundation
import Testing

@testable import bellkeys

/// Struck notes `notes`, one every 480 ticks (24,000 frames), each released 200 ticks later.
private func struck(_ notes: [Int]) -> Data {
    var events: [(Int, [UInt8])] = []
    for (i, note) in notes.enumerated() {
        events.append((i * 480, [0x90, UInt8(note), 100]))
        events.append((i * 480 + 200, [0x80, UInt8(note), 0]))
    }
    return midiFile(events)
}

private func write(_ data: Data, _ path: String) throws { try data.write(to: URL(fileURLWithPath: path)) }

private func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

/// The plain bells (centred, dry) as a map in `folder`, with `extra` fields before its keys.
private func plainMap(in folder: String, extra: String = "") throws -> String {
    var text = try String(contentsOfFile: repository + "/Samples/examples/plain.json", encoding: .utf8)
    text = text.replacing("\"../bell-", with: "\"\(repository)/Samples/bell-")
    text = text.replacing("\"keys\":", with: extra + "\"keys\":")
    let path = folder + "/plain.json"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

@Suite struct EveryKeySounds {
    /// A 61-key keyboard's every note (C2 to C7) rings a bell through the bundled map: the same
    /// bytes as the bell of its name in C4..C5 struck instead. `--unmapped ignore` leaves the 48
    /// outside C4..C5 out, as the bundled map did before.
    @Test func theBundledMapRingsEveryKeyOfA61KeyKeyboard() throws {
        let folder = temporaryFolder()
        let keys = Array(36...96)
        let bells = keys.map { note in
            var folded = note
            while folded < 60 { folded += 12 }
            while folded > 72 { folded -= 12 }
            return folded
        }
        try write(struck(keys), folder + "/61.mid")
        try write(struck(bells), folder + "/bells.mid")
        let run = try bellkeys(["render", "61.mid", "-o", "61.wav"], in: folder)
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("61 notes, ") && run.output.contains(" 0 unmapped notes ignored"), "\(run.output)")
        #expect(run.error.isEmpty, "\(run.error)")
        _ = try bellkeys(["render", "bells.mid", "-o", "bells.wav"], in: folder)
        #expect(try bytes(folder + "/61.wav") == bytes(folder + "/bells.wav"))

        let skipped = try bellkeys(["render", "61.mid", "-o", "skip.wav", "--unmapped", "ignore"], in: folder)
        #expect(skipped.output.contains("48 unmapped notes ignored"), "\(skipped.output)")
        #expect(skipped.error.contains("48 of the 61 notes of 61.mid have no bell in the map (its keys: C4..C5)"))
    }
}

@Suite struct Transposing {
    /// A MIDI file's notes C3..C4 with --transpose 12, with the map's "transpose": 12, and with
    /// --transpose 12 in a settings file all render the bytes of C4..C5 played as they are; the
    /// command line's --transpose replaces the map's.
    @Test func aMIDIFileIsTransposedByTheOptionTheMapAndTheSettingsFile() throws {
        let folder = temporaryFolder()
        try write(struck(Array(48...60)), folder + "/low.mid")
        try write(struck(Array(60...72)), folder + "/high.mid")
        let plain = try plainMap(in: folder)
        _ = try bellkeys(["render", "high.mid", "-o", "high.wav", "--map", plain], in: folder)
        let high = try bytes(folder + "/high.wav")

        let option = try bellkeys(
            ["render", "low.mid", "-o", "a.wav", "--map", plain, "--transpose", "12"], in: folder)
        #expect(option.status == 0 && option.output.contains("0 unmapped notes ignored"), "\(option.output)")
        #expect(try bytes(folder + "/a.wav") == high)

        let mapFolder = temporaryFolder()
        let transposing = try plainMap(in: mapFolder, extra: "\"transpose\": 12, ")
        _ = try bellkeys(["render", "low.mid", "-o", "b.wav", "--map", transposing], in: folder)
        #expect(try bytes(folder + "/b.wav") == high)
        _ = try bellkeys(["render", "high.mid", "-o", "c.wav", "--map", transposing, "--transpose", "0"], in: folder)
        #expect(try bytes(folder + "/c.wav") == high)

        let config = temporaryFolder()
        try FileManager.default.createDirectory(atPath: config + "/bellkeys", withIntermediateDirectories: true)
        try "--transpose 12\n--map \(plain)\n".write(
            toFile: config + "/bellkeys/bellkeys.conf", atomically: true, encoding: .utf8)
        let set = try bellkeys(
            ["render", "low.mid", "-o", "d.wav"], in: folder, environment: ["XDG_CONFIG_HOME": config], settings: true)
        #expect(
            set.output.contains("settings from \(config)/bellkeys/bellkeys.conf: --transpose 12 --map "),
            "\(set.output)")
        #expect(try bytes(folder + "/d.wav") == high)
    }

    /// bellkeys' own demo tune is not moved: --transpose is for keyboards and the files a user
    /// brings. A render that plays nothing says so without a word about the settings.
    @Test func theDemoTuneIsNotTransposed() throws {
        let folder = temporaryFolder()
        _ = try bellkeys(["demo", "-o", "a.wav"], in: folder)
        let moved = try bellkeys(["demo", "-o", "b.wav", "--transpose", "12"], in: folder)
        #expect(moved.status == 0, "\(moved.error)")
        #expect(try bytes(folder + "/a.wav") == bytes(folder + "/b.wav"))

        try write(midiFile([(0, [0xB0, 7, 100])]), folder + "/silent.mid")
        let config = temporaryFolder()
        try FileManager.default.createDirectory(atPath: config + "/bellkeys", withIntermediateDirectories: true)
        try "--transpose 12\n".write(toFile: config + "/bellkeys/bellkeys.conf", atomically: true, encoding: .utf8)
        let silent = try bellkeys(
            ["render", "silent.mid", "-o", "s.wav"], in: folder, environment: ["XDG_CONFIG_HOME": config],
            settings: true)
        #expect(silent.status == 3)
        #expect(!silent.error.contains("bellkeys check lists the settings"), "\(silent.error)")
    }

    @Test func outOfRangeIsAUsageError() throws {
        let run = try bellkeys(["render", "x.mid", "-o", "x.wav", "--transpose", "-49"])
        #expect(run.status == 64)
        #expect(run.error.contains("--transpose -49 is out of range; use -48 to 48 semitones"))
        let folder = temporaryFolder()
        let map = try plainMap(in: folder, extra: "\"transpose\": 60, ")
        let check = try bellkeys(["check", "--map", map])
        #expect(check.status == 1)
        #expect(check.error.contains("transpose"), "\(check.error)")
    }
}

/// A settings file of `text` in a fresh folder; its path.
private func settingsFile(_ text: String) throws -> String {
    let path = temporaryFolder() + "/bellkeys.conf"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// The parsed command, dumped (every option's value), for comparing two parses.
private func dumped(_ command: ParsableCommand) -> String {
    var text = ""
    dump(command, to: &text)
    return text
}

@Suite struct SettingsFiles {
    /// Every option `play` takes, set in a settings file, parses to what the same option on the
    /// command line parses to. (Two files: --jack-connect asks for JACK, --device for ALSA.)
    @Test func everyOptionOfPlayCanBeSetInAFile() throws {
        let alsa = [
            "--web", "--web-port 8081", "--web-address 127.0.0.1", "--web-devices 10", "--web-tune a.mid",
            "--web-tune 'b c.mid'", "--map /srv/bells.json", "--program 3", "--bank 1", "--set Handbells",
            "--driver alsa", "--device plughw:CARD=Device", "--rate 44100", "--period 128", "--periods 3",
            "--channels 4", "--priority 60", "--connect Keystation 61", "--channel 2", "--skip-drums",
            "--unmapped ignore", "--transpose -12", "--polyphony 64", "--volume -6", "--reverb church",
            "--quality best", "--no-ui", "--record take.wav", "--quiet", "--verbose",
        ]
        let jack = ["--driver jack", "--jack-connect system:playback_1", "--jack-connect=system:playback_2"]
        let help = try HelpOption.parse(command: "play").keys
        let given = Set((alsa + jack).map { String($0.prefix { $0 != " " && $0 != "=" }) })
        #expect(Set(help).subtracting(given) == ["--no-config", "--help", "--version"])
        for lines in [alsa, jack] {
            let path = try settingsFile("# every option\n" + lines.joined(separator: "\n") + "\n")
            let read = try argumentsWithSettings([], paths: [path])
            #expect(read.report.used.count == lines.count)
            let typed = lines.flatMap { line -> [String] in
                if line.prefix(while: { $0 != " " }).contains("=") { return [line] }
                let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                return parts.count == 1 ? parts : [parts[0], parts[1].replacing("'", with: "")]
            }
            #expect(read.arguments.first == "play")
            #expect(try dumped(Play.parse(Array(read.arguments.dropFirst()))) == dumped(Play.parse(typed)))
        }
    }

    /// The command line replaces a setting of the same option (a repeatable one's whole list),
    /// the user's file replaces the system's; the other lines stay, and each command takes the
    /// lines it has options for.
    @Test func theCommandLineThenTheUsersFileThenTheSystems() throws {
        let system = try settingsFile(
            "--device hw:1\n--reverb church\n--connect Piano\n--connect Drums\n--period 256\n")
        let user = try settingsFile("--reverb room\n--transpose 12\n")
        let play = try argumentsWithSettings(["--period", "128", "--connect", "Keystation"], paths: [system, user])
        #expect(
            play.arguments == [
                "play", "--device=hw:1", "--reverb=room", "--transpose=12", "--period", "128", "--connect",
                "Keystation",
            ])
        #expect(
            play.report.fates == [
                [
                    .used, .replaced(by: user + "'s"), .replaced(by: "the command line's --connect"),
                    .replaced(by: "the command line's --connect"), .replaced(by: "the command line's --period"),
                ],
                [.used, .used],
            ])
        let render = try argumentsWithSettings(["render", "a.mid", "-o", "a.wav"], paths: [system, user])
        #expect(render.arguments == ["render", "--reverb=room", "--transpose=12", "a.mid", "-o", "a.wav"])
        #expect(render.report.fates[0][0] == .notTaken(command: "render"))
        let demo = try argumentsWithSettings(["demo"], paths: [system])
        #expect(demo.arguments == ["demo", "--device=hw:1", "--reverb=church", "--period=256"])
        // A short option on the command line replaces its long name's setting; after a `--`,
        // words are no options.
        let quiet = try settingsFile("--quiet\n--verbose\n")
        let short = try argumentsWithSettings(["-qv", "--", "--quiet"], paths: [quiet])
        #expect(
            short.report.fates == [
                [.replaced(by: "the command line's --quiet"), .replaced(by: "the command line's --verbose")]
            ])
        // The user's file may build on the system's: --web-port there, --web in /etc.
        let web = try settingsFile("--web\n"), port = try settingsFile("--web-port 9000\n--record=-take.wav\n")
        let both = try argumentsWithSettings([], paths: [web, port])
        let parsed = try Play.parse(Array(both.arguments.dropFirst()))
        #expect(parsed.classroomOptions.webPort == 9000 && parsed.sessionOptions.record == "-take.wav")
        let check = try argumentsWithSettings(["check", "--rate", "44100"], paths: [system, user])
        #expect(check.arguments == ["check", "--rate", "44100"])
        #expect(check.report.details.contains("    line 2: --transpose 12 (for play; check has no --transpose)"))
        let ignored = try argumentsWithSettings(["demo", "--no-config"], paths: [system])
        #expect(ignored.arguments == ["demo", "--no-config"] && ignored.report.ignored)
        for asked in [
            ["--help"], ["list"], ["help", "play"], ["--version"], ["render", "-h"], ["--experimental-dump-help"],
            ["--generate-completion-script", "bash"],
        ] {
            #expect(try argumentsWithSettings(asked, paths: [system]).arguments == asked)
        }
        let missing = try argumentsWithSettings(["check"], paths: ["/nonexistent/bellkeys.conf"])
        #expect(missing.arguments == ["check"] && missing.report.files.isEmpty)
    }

    /// A bad line is an error that names the file, the line and the fix, before anything plays:
    /// an unknown option, a value out of range, a flag with a value, lines that clash, a file
    /// that cannot be read.
    @Test func badLinesAreErrorsBeforeAnySound() throws {
        let cases: [(String, Int, String)] = [
            ("--devise hw:1", 1, "Unknown option '--devise'. Did you mean '--device'?"),
            ("--device hw:1\n--devise hw:2", 2, "--devise hw:2: Unknown option '--devise'. Did you mean '--device'?"),
            ("# ok\n--period 5", 2, "--period 5: --period 5 is out of range; use 16 to 8192 frames"),
            ("--no-ui yes", 1, "--no-ui yes: The option '--no-ui' does not take any value, but 'yes' was specified."),
            ("--driver jack\n--device hw:1", 0, "lines 1 and 2: --device is an ALSA option"),
            ("--no-config", 1, "--no-config is not a setting"),
            ("--transpose 99", 1, "--transpose 99 is out of range; use -48 to 48 semitones"),
            ("--web-port 9000", 1, "--web-port sets up the classroom; add --web"),
            // Not the lines whose option or value only looks like the one named:
            ("--reverb room\n--web-port 9000", 2, "--web-port 9000: --web-port sets up the classroom"),
            ("--channels 2\n--channel 10\n--skip-drums", 0, "lines 2 and 3: --channel 10 is the drum channel"),
        ]
        for (text, line, message) in cases {
            let path = try settingsFile(text)
            do {
                _ = try argumentsWithSettings(["demo"], paths: [path])
                Issue.record("\(text) was taken")
            } catch {
                #expect(error.line == line, "\(text): \(error)")
                #expect(error.message.contains(message), "\(text): \(error)")
                #expect(error.description.contains("fix: "))
            }
        }
        let folder = temporaryFolder()
        #expect(throws: SettingsFileError.self) { try argumentsWithSettings(["demo"], paths: [folder]) }

        // Through the program: exit status 1, the file and line, and no start-up report.
        let config = temporaryFolder()
        try FileManager.default.createDirectory(atPath: config + "/bellkeys", withIntermediateDirectories: true)
        try "--device null\n--volume loud\n".write(
            toFile: config + "/bellkeys/bellkeys.conf", atomically: true, encoding: .utf8)
        let run = try bellkeys(["demo", "--no-ui"], environment: ["XDG_CONFIG_HOME": config], settings: true)
        #expect(run.status == 1)
        #expect(
            run.error.hasPrefix("bellkeys: error: \(config)/bellkeys/bellkeys.conf line 2: --volume loud: "),
            "\(run.error)")
        #expect(!run.output.contains("bellkeys: 13 bells") && !run.error.contains("bellkeys: 13 bells"))
        // --no-config plays past it (to the device, which a render stands in for).
        let ignored = try bellkeys(
            ["check", "--no-config"], environment: ["XDG_CONFIG_HOME": config], settings: true)
        #expect(ignored.status == 0 && !ignored.output.contains("settings"), "\(ignored.error)")
    }

    /// `check` and the start-up report say which files were read, and a clash with the command
    /// line names the setting.
    @Test func checkSaysWhichFilesWereRead() throws {
        let config = temporaryFolder()
        try FileManager.default.createDirectory(atPath: config + "/bellkeys", withIntermediateDirectories: true)
        try "# room 4\n--device hw:1\n--set Bells\n".write(
            toFile: config + "/bellkeys/bellkeys.conf", atomically: true, encoding: .utf8)
        let env = ["XDG_CONFIG_HOME": config]
        let check = try bellkeys(["check", "--set", "Handbells"], environment: env, settings: true)
        #expect(check.status == 1) // --set with a map of one instrument
        let checked = try bellkeys(["check"], environment: env, settings: true)
        #expect(checked.status == 1, "\(checked.output)")
        #expect(
            checked.error.contains("(--set Bells is set in \(config)/bellkeys/bellkeys.conf line 3)"),
            "\(checked.error)")
        try "# room 4\n--device hw:1\n".write(
            toFile: config + "/bellkeys/bellkeys.conf", atomically: true, encoding: .utf8)
        let ok = try bellkeys(["check"], environment: env, settings: true)
        #expect(ok.status == 0)
        #expect(ok.output.contains("  /nonexistent/bellkeys-test/bellkeys.conf: not there\n"), "\(ok.output)")
        #expect(
            ok.output.hasSuffix(
                "  \(config)/bellkeys/bellkeys.conf: 1 setting\n    line 2: --device hw:1 (for play; check has no --device)\n"
            ),
            "\(ok.output)")
        let clash = try bellkeys(["demo", "--driver", "jack"], environment: env, settings: true)
        #expect(clash.status == 64)
        #expect(clash.error.contains("--device is an ALSA option"))
        #expect(
            clash.error.contains("  (--device hw:1 is set in \(config)/bellkeys/bellkeys.conf line 2)"),
            "\(clash.error)")
    }
}
