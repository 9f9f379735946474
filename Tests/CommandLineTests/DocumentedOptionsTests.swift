import Foundation
import Testing

/// What the docs say about options, held to what `bellkeys help COMMAND` says, and the docs'
/// links held to the files and headings they point at.
///
/// A doc states an option's default and range in one of two forms the test reads:
/// - a table whose header starts `| option |` and has a `default` column: the options named in
///   the first cell, the default cell (compared whole), and every "A to B" in the other cells
///   (compared as a set with the help's);
/// - in prose, a parenthesis right after the option: "`--web-port N` (default: 8080)" or
///   "`--web-devices N` (1 to 250)".
/// In a section of docs/commands.md named for a command, its help is the reference; elsewhere,
/// that of every command that has the option. The help's default is what its summary says in
/// "(default: X)" or "; default: X)"; a flag's is "off", and so is that of an option whose help
/// gives none; a required option's is "required".
@Suite struct DocumentedOptions {
    /// The commands `bellkeys --help` lists.
    static func commands() throws -> [String] {
        let top = try bellkeys(["--help"]).output
        guard let start = top.range(of: "SUBCOMMANDS:") else { return [] }
        return top[start.upperBound...].split(separator: "\n").compactMap { line in
            line.wholeMatch(of: /^ {2}([a-z]+)(?: \(default\))? .+/).map { String($0.1) }
        }
    }

    @Test func everyOptionStatesItsDefaultOnceInItsHelp() throws {
        for command in try Self.commands() {
            for (name, option) in try HelpOption.parse(command: command) {
                #expect(
                    option.defaults.count <= 1,
                    "bellkeys help \(command): \(name) gives its default twice: \(option.defaults)")
            }
        }
    }

    /// Each range the help gives is the one the command enforces: the values just outside it
    /// are refused as a usage error.
    @Test func everyRangeInTheHelpIsEnforced() throws {
        for command in try Self.commands() {
            for (name, option) in try HelpOption.parse(command: command) {
                for range in option.ranges {
                    let ends = range.split(separator: " to ").compactMap { Int($0) }
                    for value in [ends[0] - 1, ends[1] + 1] {
                        let positional = command == "render" ? ["in.mid", "-o", "out.wav"] : []
                        let run = try bellkeys([command] + positional + ["\(name)=\(value)"])
                        #expect(
                            run.status == 64 && run.error.contains("out of range"),
                            "bellkeys \(command) \(name)=\(value) (help: \(range)): \(run.error)")
                    }
                }
            }
        }
    }

    @Test func everyDefaultAndRangeInTheDocsIsTheHelps() throws {
        var help: [String: [String: HelpOption]] = [:]
        for command in try Self.commands() { help[command] = try HelpOption.parse(command: command) }
        let claims = try docPages().flatMap { try OptionClaim.read($0) }
        #expect(claims.count > 40, "the docs' options were not found: \(claims.count) claims")
        for claim in claims {
            let references: [(String, HelpOption)]
            if let command = claim.command {
                references = help[command]?[claim.option].map { [(command, $0)] } ?? []
            } else {
                references = help.sorted { $0.key < $1.key }.compactMap { command, options in
                    options[claim.option].map { (command, $0) }
                }
            }
            #expect(!references.isEmpty, "\(claim.place): \(claim.option): no command's help has it")
            for (command, option) in references {
                if let stated = claim.defaultText {
                    #expect(
                        stated == option.defaultText,
                        "\(claim.place): \(claim.option) default \"\(stated)\"; bellkeys help \(command) says \"\(option.defaultText)\""
                    )
                }
                let ranges = Set(claim.ranges), helpRanges = Set(option.ranges)
                let agrees = claim.isTableRow ? ranges == helpRanges : ranges.isSubset(of: helpRanges)
                #expect(
                    agrees,
                    "\(claim.place): \(claim.option) range \(claim.ranges.sorted()); bellkeys help \(command) says \(option.ranges.sorted())"
                )
            }
        }
    }

    /// A user page that speaks of an option's default says it in the form the test reads.
    @Test func userPagesStateDefaultsInTheFormTheTestReads() throws {
        for page in try docPages() where page.isUserPage {
            for (line, sentence) in page.proseSentences() {
                guard sentence.contains(/`-{1,2}[a-z]/) else { continue }
                let words = sentence.replacing(/`[^`]*`/, with: "").replacing(/[(;] ?default:(?= )/, with: "")
                #expect(
                    !words.localizedCaseInsensitiveContains("default"),
                    "\(page.name):\(line): an option's default in a form the test cannot read (write \"`--option N` (default: X)\"): \(sentence)"
                )
            }
        }
    }

    /// Every relative link in the README and the docs reaches a file, and a heading in it when
    /// it names one. The pages the package installs (the README, docs/*.md) link nothing in
    /// docs/design/, which it does not install.
    @Test func everyLinkInTheDocsReachesItsTarget() throws {
        for page in try docPages() + [try DocPage(path: "CONTRIBUTING.md")] {
            for (line, target) in page.links() {
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") {
                    continue
                }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? page.path : page.folder + String(parts[0])
                let resolved = URL(fileURLWithPath: repository + "/" + file).standardizedFileURL.path
                #expect(
                    FileManager.default.fileExists(atPath: resolved),
                    "\(page.name):\(line): \(target): no such file")
                if page.isInstalled {
                    #expect(!resolved.contains("/docs/design/"), "\(page.name):\(line): \(target): not installed")
                }
                if parts.count == 2, resolved.hasSuffix(".md"), FileManager.default.fileExists(atPath: resolved) {
                    let anchors = try DocPage(path: String(resolved.dropFirst(repository.count + 1))).anchors()
                    #expect(anchors.contains(String(parts[1])), "\(page.name):\(line): \(target): no such heading")
                }
            }
        }
    }
}

/// One option's entry in `bellkeys help COMMAND`.
struct HelpOption {
    var takesValue: Bool
    var isRequired: Bool
    /// Every default its summary states (one, if any).
    var defaults: [String]
    /// Every "A to B" its summary states.
    var ranges: [String]

    var defaultText: String {
        if let stated = defaults.first { return stated }
        return isRequired ? "required" : "off"
    }

    /// The options of `bellkeys help command`, by long name. Only the summary (the text beside
    /// the option) is read, not the indented discussion under it.
    static func parse(command: String) throws -> [String: HelpOption] {
        let text = try bellkeys(["help", command]).output
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let usage = (lines.first { $0.hasPrefix("USAGE:") } ?? "").replacing(/\[[^\]]*\]/, with: "")
        let continuation = String(repeating: " ", count: 26)
        var options: [String: HelpOption] = [:]
        var index = 0
        while index < lines.count {
            guard let head = lines[index].wholeMatch(of: /^ {2}(?:-[a-zA-Z], )?(--[a-z][a-z-]*)( <[^>]+>)?(?: +(.*))?/)
            else {
                index += 1
                continue
            }
            var summary = String(head.3 ?? "")
            index += 1
            while index < lines.count, lines[index].hasPrefix(continuation) {
                summary += " " + lines[index].trimmingCharacters(in: .whitespaces)
                index += 1
            }
            summary = summary.trimmingCharacters(in: .whitespaces)
            let name = String(head.1)
            options[name] = HelpOption(
                takesValue: head.2 != nil, isRequired: usage.contains(name + " <"),
                defaults: summary.matches(of: /[(;] ?default: ([^);]+)/).map { String($0.1) },
                ranges: summary.matches(of: /(-?[0-9]+) to (-?[0-9]+)/).map { "\($0.1) to \($0.2)" })
        }
        return options
    }
}

/// What a doc says about one option's default or range, and where.
struct OptionClaim {
    var place: String
    /// The command whose section of docs/commands.md it is in, if any.
    var command: String?
    var option: String
    var defaultText: String?
    var ranges: [String]
    var isTableRow: Bool

    static func read(_ page: DocPage) throws -> [OptionClaim] {
        var claims: [OptionClaim] = []
        let commands = ["play", "demo", "render", "check", "list"]
        var section: String?
        var table: (defaultColumn: Int, isOptions: Bool)?
        var fenced = false
        for (number, line) in page.lines.enumerated() {
            let place = "\(page.name):\(number + 1)"
            if line.hasPrefix("```") { fenced.toggle() }
            if fenced { continue }
            if line.hasPrefix("## ") {
                let title = String(line.dropFirst(3))
                section = page.name == "docs/commands.md" && commands.contains(title) ? title : nil
            }
            guard line.hasPrefix("|") else {
                table = nil
                continue
            }
            let cells = tableCells(line)
            if table == nil {
                let names = cells.map { $0.lowercased() }
                table = (names.firstIndex(of: "default") ?? -1, names.first == "option")
                continue
            }
            guard let table, table.isOptions, table.defaultColumn >= 0, table.defaultColumn < cells.count,
                !cells[0].hasPrefix("---")
            else { continue }
            let column = table.defaultColumn
            let others = cells.enumerated().filter { $0.offset != column }.map(\.element).joined(separator: " ")
            for option in cells[0].matches(of: /--[a-z][a-z-]*/) {
                claims.append(
                    OptionClaim(
                        place: place, command: section, option: String(option.0), defaultText: cells[column],
                        ranges: ranges(in: others), isTableRow: true))
            }
        }
        for (line, paragraph) in page.proseParagraphs() {
            for mention in paragraph.text.matches(of: /`(--[a-z][a-z-]*)[^`]*` ?\(([^()]*)\)/) {
                let inside = String(mention.2)
                let stated = inside.firstMatch(of: /(?:^|; )default: ([^;]+)/).map { plain(String($0.1)) }
                let found = ranges(in: inside)
                if stated == nil && found.isEmpty { continue }
                claims.append(
                    OptionClaim(
                        place: "\(page.name):\(line)", command: paragraph.section, option: String(mention.1),
                        defaultText: stated, ranges: found, isTableRow: false))
            }
        }
        return claims
    }

    static func ranges(in text: String) -> [String] {
        plain(text).matches(of: /(-?[0-9]+) to (-?[0-9]+)/).map { "\($0.1) to \($0.2)" }
    }

    /// A table row's cells, split at the pipes that are not escaped, as plain text.
    static func tableCells(_ line: String) -> [String] {
        var cells: [String] = []
        var cell = ""
        var previous: Character = " "
        for character in line.dropFirst() {
            if character == "|" && previous != "\\" {
                cells.append(plain(cell))
                cell = ""
            } else {
                cell.append(character)
            }
            previous = character
        }
        return cells
    }
}

/// Markdown as a reader sees it: code spans' backticks, links' targets and escapes gone,
/// spaces collapsed.
func plain(_ markdown: String) -> String {
    markdown.replacing(/\[([^\]]*)\]\([^)]*\)/) { String($0.1) }.replacing("`", with: "")
        .replacing("\\|", with: "|").replacing(/\s+/, with: " ").trimmingCharacters(in: .whitespaces)
}

/// The pages whose option texts and links are checked: the README and everything in docs/.
func docPages() throws -> [DocPage] {
    let docs = repository + "/docs"
    let found = FileManager.default.enumerator(atPath: docs)?.compactMap { $0 as? String } ?? []
    return try (["README.md"] + found.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }).map {
        try DocPage(path: $0)
    }
}

/// One Markdown file of the checkout.
struct DocPage {
    var path: String
    var lines: [String]

    init(path: String) throws {
        self.path = path
        lines = try String(contentsOfFile: repository + "/" + path, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    var name: String { path }
    var folder: String { path.contains("/") ? String(path[...path.lastIndex(of: "/")!]) : "" }
    /// The package installs the README and docs/*.md (Tools/build-deb), not docs/design/.
    var isInstalled: Bool { path == "README.md" || (path.hasPrefix("docs/") && !path.dropFirst(5).contains("/")) }
    /// Pages for people who use bellkeys; the others are for people who change it.
    var isUserPage: Bool {
        isInstalled && !["docs/testing.md", "docs/architecture.md", "docs/install.md"].contains(path)
    }

    /// Paragraphs of prose (not code, not tables, not headings), each with its first line's
    /// number and the commands.md section it is in.
    func proseParagraphs() -> [(Int, (text: String, section: String?))] {
        var paragraphs: [(Int, (text: String, section: String?))] = []
        var current: [String] = []
        var start = 0
        var section: String?
        var fenced = false
        func close() {
            if !current.isEmpty { paragraphs.append((start, (current.joined(separator: " "), section))) }
            current = []
        }
        for (number, line) in lines.enumerated() {
            if line.hasPrefix("```") {
                fenced.toggle()
                close()
                continue
            }
            if fenced { continue }
            if line.hasPrefix("#") {
                close()
                let title = line.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces)
                section = path == "docs/commands.md" && line.hasPrefix("## ") ? title : nil
                continue
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("|") || trimmed.hasPrefix("- ") || trimmed.hasPrefix("<!--") {
                close()
                if trimmed.isEmpty || trimmed.hasPrefix("|") { continue }
            }
            if current.isEmpty { start = number + 1 }
            current.append(trimmed)
        }
        close()
        let commands = ["play", "demo", "render", "check", "list"]
        return paragraphs.map { ($0.0, ($0.1.text, $0.1.section.flatMap { commands.contains($0) ? $0 : nil })) }
    }

    /// The prose's sentences, each with the line its paragraph starts on.
    func proseSentences() -> [(Int, String)] {
        proseParagraphs().flatMap { line, paragraph in
            paragraph.text.split(separator: /\. (?=[A-Z`*(])/).map { (line, String($0)) }
        }
    }

    /// Every link target outside code, with its line number.
    func links() -> [(Int, String)] {
        var found: [(Int, String)] = []
        var fenced = false
        for (number, line) in lines.enumerated() {
            if line.hasPrefix("```") { fenced.toggle() }
            if fenced { continue }
            let text = line.replacing(/`[^`]*`/, with: "")
            for link in text.matches(of: /\]\(([^)\s]+)\)/) { found.append((number + 1, String(link.1))) }
        }
        return found
    }

    /// The anchors of its headings, as GitHub makes them: lower case, punctuation but hyphens
    /// and underscores dropped, spaces made hyphens, a repeated one numbered.
    func anchors() -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        var fenced = false
        for line in lines {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, line.hasPrefix("#") else { continue }
            let title = line.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces)
            var slug = ""
            for character in title.lowercased() {
                if character == " " {
                    slug.append("-")
                } else if character.isLetter || character.isNumber || character == "-" || character == "_" {
                    slug.append(character)
                }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }
}
