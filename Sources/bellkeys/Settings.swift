import ArgumentParser
import BellkeysFormats
import Glibc

/// `--no-config`, which every command that reads the settings files takes.
struct SettingsOptions: ParsableArguments {
    @Flag(
        name: .customLong("no-config"),
        help: ArgumentHelp(
            "Read no settings file: neither /etc/bellkeys/bellkeys.conf nor $XDG_CONFIG_HOME/bellkeys/bellkeys.conf (~/.config/bellkeys/bellkeys.conf).",
            discussion: "Without it, each line of those files is an option given before the command line's."))
    var noConfig = false
}

/// A settings file that was read, and its lines.
struct SettingsFileRead {
    /// Its path, and the same for a person (the home folder as ~).
    var path: String
    var shownPath: String
    var lines: [SettingsLine]
}

/// What became of one setting: given to the command, replaced (by the command line, or by the
/// user's file for /etc's), or not an option of this command.
enum SettingFate: Equatable {
    case used
    case replaced(by: String)
    case notTaken(command: String)
}

/// The settings files of this run and what became of each line: read by `Bellkeys.main` before
/// the command line is parsed, for the start-up report, `check` and error messages.
struct SettingsReport {
    /// `--no-config` was given (nothing was read).
    var ignored = false
    /// The paths looked at, in order (the system's, then the user's), shown as `shownPath`.
    var looked: [String] = []
    var files: [SettingsFileRead] = []
    /// Per file, per line (in order): what became of it.
    var fates: [[SettingFate]] = []

    /// The settings given to the command, with their files.
    var used: [(file: SettingsFileRead, line: SettingsLine)] {
        files.indices.flatMap { f in
            files[f].lines.indices.filter { fates[f][$0] == .used }.map { (files[f], files[f].lines[$0]) }
        }
    }

    /// One line for the start-up report and `render`: the files read and what they set.
    var summary: String {
        if ignored { return "settings files: none read (--no-config)" }
        if files.isEmpty { return "settings files: none (bellkeys reads " + looked.joined(separator: " and ") + ")" }
        let parts = files.indices.map { f in
            let lines = files[f].lines.indices
            let used = lines.filter { fates[f][$0] == .used }.map { files[f].lines[$0].text }
            let unused = lines.count - used.count
            return files[f].shownPath + ": " + (used.isEmpty ? "nothing used" : used.joined(separator: " "))
                + (unused > 0 ? " (\(unused) not used: see bellkeys check)" : "")
        }
        return "settings from " + parts.joined(separator: "; ")
    }

    /// What `check` prints: every file looked at, and every line with what became of it.
    var details: [String] {
        if ignored { return ["settings files: none read (--no-config)"] }
        var lines = ["settings files (each line an option given before the command line's):"]
        for path in looked {
            guard let f = files.firstIndex(where: { $0.shownPath == path }) else {
                lines.append("  \(path): not there")
                continue
            }
            let file = files[f]
            lines.append("  \(path): \(file.lines.count) setting\(file.lines.count == 1 ? "" : "s")")
            for (k, line) in file.lines.enumerated() {
                let fate =
                    switch fates[f][k] {
                    case .used: "used"
                    case .replaced(let by): "replaced by \(by)"
                    case .notTaken(let command): "for play; \(command) has no \(line.option)"
                    }
                lines.append("    line \(line.line): \(line.text) (\(fate))")
            }
        }
        return lines
    }

    /// For an error message: the settings it may come from (their option, or a value of 3
    /// characters or more, is a whole word of `message`).
    func origins(of message: String) -> [String] {
        used.filter { entry in
            names(message, entry.line.option)
                || (entry.line.value.map { $0.count >= 3 && names(message, $0) } ?? false)
        }
        .map { "\($0.line.text) is set in \($0.file.shownPath) line \($0.line.line)" }
    }
}

/// Whether `text` has `word` as a whole word: not inside a longer name (`--channel` is not in
/// "--channels", `room` not in "classroom").
func names(_ text: String, _ word: String) -> Bool {
    func isNamePart(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "-" || c == "_" }
    for found in text.ranges(of: word) {
        let before = found.lowerBound == text.startIndex ? nil : text[text.index(before: found.lowerBound)]
        let after = found.upperBound == text.endIndex ? nil : text[found.upperBound]
        let startsWord = (word.first.map { !isNamePart($0) } ?? true) || (before.map { !isNamePart($0) } ?? true)
        if startsWord, after.map({ !isNamePart($0) }) ?? true { return true }
    }
    return false
}

/// This run's settings files (set once, by `Bellkeys.main`, before any command runs).
nonisolated(unsafe) var settingsReport = SettingsReport()

/// The settings files, in the order read: the system's (`BELLKEYS_SYSTEM_CONFIG`, else
/// /etc/bellkeys/bellkeys.conf), then the user's (`$XDG_CONFIG_HOME/bellkeys/bellkeys.conf`, else
/// `~/.config/bellkeys/bellkeys.conf`).
func settingsPaths() -> [String] {
    var paths = [environmentValue("BELLKEYS_SYSTEM_CONFIG") ?? "/etc/bellkeys/bellkeys.conf"]
    if let config = environmentValue("XDG_CONFIG_HOME"), config.hasPrefix("/") {
        paths.append(config + "/bellkeys/bellkeys.conf")
    } else if let home = environmentValue("HOME"), home.hasPrefix("/") {
        paths.append(home + "/.config/bellkeys/bellkeys.conf")
    }
    return paths
}

private func environmentValue(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}

/// `path` for a person: the home folder as ~.
private func shown(_ path: String) -> String {
    if let home = environmentValue("HOME"), home.count > 1, path.hasPrefix(home + "/") {
        return "~" + path.dropFirst(home.count)
    }
    return path
}

/// Reads the settings file at `path`: nil when there is none; an error worded for the user when
/// it cannot be read or is not a settings file.
func readSettingsFile(_ path: String) throws(SettingsFileError) -> SettingsFileRead? {
    let name = shown(path)
    let fix = "make it readable (chmod a+r \(path)), remove it, or start bellkeys with --no-config"
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 {
        let code = errno
        if code == ENOENT || code == ENOTDIR { return nil }
        throw SettingsFileError(
            file: name, line: 0, message: "cannot be read: \(String(cString: strerror(code)))", fix: fix)
    }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16_384)
    while bytes.count <= settingsFileLimit {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw SettingsFileError(
                file: name, line: 0, message: "cannot be read: \(String(cString: strerror(errno)))",
                fix: errno == EISDIR ? "it is a folder: the settings file is \(path) itself, a text file" : fix)
        }
        if count == 0 { break }
        bytes += chunk[..<count]
    }
    return SettingsFileRead(path: path, shownPath: name, lines: try parseSettingsFile(bytes, file: name))
}

/// The commands that read the settings files, by name.
private let settingsCommands: [String: ParsableCommand.Type] = [
    "play": Play.self, "demo": Demo.self, "render": Render.self, "check": Check.self,
]

/// The arguments to parse: `arguments` (the command line, without the program's name) with the
/// settings files' options for its command put before its own, and what became of each setting.
/// Every line must be an option `play` takes (the settings the files give, checked together); a
/// command takes the lines it has options for. The user's file replaces the system's setting of
/// an option, and the command line replaces both (a repeatable option's list whole). Help,
/// --version, `list` and `help` read nothing; nor does --no-config.
func argumentsWithSettings(_ arguments: [String], paths: [String] = settingsPaths()) throws(SettingsFileError)
    -> (arguments: [String], report: SettingsReport)
{
    var report = SettingsReport()
    report.looked = paths.map(shown)
    let first = arguments.first ?? ""
    let asksForHelp = arguments.contains {
        ["-h", "--help", "--help-hidden", "--version", "--generate-completion-script", "--experimental-dump-help"]
            .contains($0)
    }
    if first == "list" || first == "help" || asksForHelp { return (arguments, report) }
    let named = settingsCommands[first] != nil
    let commandName = named ? first : "play"
    let command = settingsCommands[commandName]!
    let rest = named ? Array(arguments.dropFirst()) : arguments
    if rest.contains("--no-config") {
        report.ignored = true
        return ([commandName] + rest, report)
    }
    var files: [SettingsFileRead] = []
    for path in paths { if let file = try readSettingsFile(path) { files.append(file) } }
    // What each file sets that a later one does not: play's settings before its command line,
    // checked together (the user's --web-port may build on /etc's --web).
    let kept = files.indices.map { f in
        files[f].lines.map { line in !files[(f + 1)...].contains { $0.lines.contains { $0.option == line.option } } }
    }
    try checkSettings(
        files.indices.flatMap { f in
            files[f].lines.indices.filter { kept[f][$0] }.map { (files[f], files[f].lines[$0]) }
        }
    )
    let onCommandLine = optionsGiven(rest)
    var fates: [[SettingFate]] = []
    var given: [String] = []
    for (f, file) in files.enumerated() {
        fates.append(
            file.lines.enumerated().map { k, line in
                if onCommandLine.contains(line.option) { return .replaced(by: "the command line's \(line.option)") }
                if !kept[f][k] {
                    let user = files[(f + 1)...].last { $0.lines.contains { $0.option == line.option } }!
                    return .replaced(by: user.shownPath + "'s")
                }
                if commandName != "play", !takes(command, line) { return .notTaken(command: commandName) }
                given += line.arguments
                return .used
            })
    }
    report.files = files
    report.fates = fates
    return ([commandName] + given + rest, report)
}

/// The long names of the options `arguments` give (a short one as its long name), up to a `--`.
private func optionsGiven(_ arguments: [String]) -> Set<String> {
    let short: [Character: String] = ["q": "--quiet", "v": "--verbose", "o": "--output", "h": "--help"]
    var names = Set<String>()
    for argument in arguments {
        if argument == "--" { break }
        if argument.hasPrefix("--") {
            names.insert(String(argument.prefix { $0 != "=" }))
        } else if argument.hasPrefix("-"), argument.count > 1 {
            for letter in argument.dropFirst() { if let name = short[letter] { names.insert(name) } }
        }
    }
    return names
}

/// Checks that every setting in `settings` (each with its file) is an option `play` takes, with
/// a value it takes, and that they go together (parsed as one list of `play`'s options:
/// --web-port needs --web, perhaps in the other file). An error names the lines its message
/// names, else the line that fails alone with it.
private func checkSettings(_ settings: [(file: SettingsFileRead, line: SettingsLine)]) throws(SettingsFileError) {
    for (file, line) in settings where ["--no-config", "--help", "--version"].contains(line.option) {
        throw SettingsFileError(
            file: file.shownPath, line: line.line, message: "\(line.option) is not a setting",
            fix: line.option == "--no-config"
                ? "delete the line; to read no settings file, give --no-config on the command line"
                : "delete the line")
    }
    let message: String
    do {
        _ = try Play.parse(settings.flatMap(\.line.arguments))
        return
    } catch {
        message = parserMessage(error)
    }
    // (Not the parser's suggestion: "Did you mean '--device'?" names a line that is right.)
    let blamed = message.split(separator: "Did you mean", maxSplits: 1).first.map(String.init) ?? message
    var named = settings.filter { names(blamed, $0.line.option) }
    if named.isEmpty {
        named = settings.filter { setting in
            do {
                _ = try Play.parse(setting.line.arguments)
                return false
            } catch {
                return parserMessage(error) == message
            }
        }.prefix(1).map { $0 }
    }
    let why =
        "(a setting is an option of `bellkeys play --help` as typed on the command line, one per line), or start bellkeys with --no-config"
    if named.count == 1 {
        let (file, line) = named[0]
        throw SettingsFileError(
            file: file.shownPath, line: line.line, message: "\(line.text): " + message,
            fix: "correct line \(line.line) or delete it \(why)")
    }
    if named.isEmpty {
        let files = Set(settings.map(\.file.shownPath)).sorted()
        throw SettingsFileError(
            file: files.joined(separator: " and "), line: 0, message: message, fix: "correct the settings \(why)")
    }
    let oneFile = Set(named.map(\.file.shownPath)).count == 1
    let places = named.map { oneFile ? String($0.line.line) : "\($0.file.shownPath) line \($0.line.line)" }
    throw SettingsFileError(
        file: oneFile ? named[0].file.shownPath : "", line: 0,
        message: (oneFile ? "lines " : "") + places.joined(separator: " and ") + ": " + message,
        fix: "change or delete one of those lines, or start bellkeys with --no-config")
}

/// Whether `command` has the option of `line` (which `play` takes: its value is good): the line
/// parses with the command's required arguments (`render`'s files, names only: nothing is
/// opened while parsing).
private func takes(_ command: ParsableCommand.Type, _ line: SettingsLine) -> Bool {
    let required = command == Render.self ? ["in.mid", "-o", "out.wav"] : []
    return (try? command.parse(line.arguments + required)) != nil
}

/// swift-argument-parser's words for a parse error, on one line, without its "Error: ".
private func parserMessage(_ error: Error) -> String {
    var text = Play.message(for: error)
    if text.hasPrefix("Error: ") { text.removeFirst(7) }
    return text.split(separator: "\n").first.map(String.init) ?? text
}
