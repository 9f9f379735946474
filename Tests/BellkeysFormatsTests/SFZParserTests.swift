import BellkeysFormats
import FuzzChecks
import Testing

@Suite struct SFZSyntaxReading {
    /// The first problem of a file that must fail.
    func problem(_ text: String, files: [String: String] = [:]) throws -> InstrumentProblem {
        let problems = sfzProblems(text, files: files)
        try #require(problems.count == 1, "\(problems)")
        return problems[0]
    }

    /// A value runs to the end of the line, but stops before spaces and `name=`, `<`, #define or
    /// #include, before `//` and `/*`; trailing spaces go, inner spaces, `#` and `/` stay.
    @Test func valuesEndWhereSfizzEndsThem() throws {
        let sfz = try parseSFZText(
            """
            <region> sample=Tubular Bells 1/chimes_F#3_p_rr1.wav   lokey=60 hikey=61\t
            <region> sample=Percussion/x y.wav// a comment
            <region>sample=a b.wav/*c*/lokey=c4<region>sample=c.wav hikey=5 pitch_keycenter=70 //
            <region> sample=d.wav #x hikey=5 #define $Z 1
            <region> sample=e.wav\thikey=64 \t <group>
            """)
        #expect(
            sfz.regions.map(\.sample) == [
                "Tubular Bells 1/chimes_F#3_p_rr1.wav", "Percussion/x y.wav", "a b.wav", "c.wav", "d.wav #x",
                "e.wav",
            ])
        #expect(sfz.regions.map(\.loKey) == [60, 0, 60, 0, 0, 0])
        #expect(sfz.regions.map(\.hiKey) == [61, 127, 127, 5, 5, 64])
        #expect(sfz.regions[3].pitchKeycenter == 70)
        #expect(sfz.regions[2].location == at(3, 1) && sfz.regions[2].sampleLocation == at(3, 16))
        #expect(sfz.regions[3].location == at(3, 36) && sfz.regions[3].sampleLocation == at(3, 51))
        // `lokey=1 2 3` keeps "1 2 3" (no name= follows), which is not a note.
        let p = try problem("<region> sample=d.wav lokey=1 2 3 tune=2")
        #expect((p.column, p.message) == (29, "\"1 2 3\" is not a note"))
        let q = try problem("<region> sample=d.wav transpose=1 $x")
        #expect((q.column, q.path, q.message) == (35, "transpose", "$x is not defined"))
    }

    @Test func commentsAnywhere() throws {
        let sfz = try parseSFZText(
            """
            // Tubular bells
            <group> //Begin Group 1
            /* a block
               over lines <region> sample=no.wav */ lokey=60 /* and */ hikey=62
            <region> /**/ sample=a.wav /* pitch_keycenter=1 */
            // <region> sample=b.wav
            <region> sample=c.wav // tune=3
            """)
        #expect(sfz.regions.map(\.sample) == ["a.wav", "c.wav"])
        #expect(sfz.regions.map(\.hiKey) == [62, 62] && sfz.regions.map(\.loKey) == [60, 60])
        #expect(sfz.regions.map(\.pitchKeycenter) == [60, 60] && sfz.regions[1].tune == 0)
        #expect(sfz.regions[0].location == at(5, 1))
    }

    @Test func anUnterminatedCommentPointsWhereItOpens() throws {
        let p = try problem("<region> sample=a.wav\n  lokey=60 /* hikey=62\n\n*")
        #expect((p.line, p.column, p.path) == (2, 12, ""))
        #expect(p.message == "this /* comment is never closed" && p.fix == "close it with */")
        let q = try problem("<region> sample=a.wav /*/")
        #expect((q.line, q.column) == (1, 23))
    }

    /// LF, CRLF and CR end lines; a UTF-8 BOM is skipped; columns count characters, not bytes.
    @Test func lineEndsBOMAndColumns() throws {
        for newline in ["\n", "\r\n", "\r"] {
            let text = "\u{FEFF}<group> lokey=60\(newline)// é comment\(newline)<region> sample=é ü.wav hikey=61"
            let sfz = try parseSFZText(text)
            #expect(sfz.regions.map(\.sample) == ["é ü.wav"])
            #expect(sfz.regions[0].location == at(3, 1) && sfz.regions[0].sampleLocation == at(3, 17))
            #expect(sfz.regions[0].loKey == 60 && sfz.regions[0].hiKey == 61)
            let p = try problem(text + "\(newline)\tvolume=x")
            #expect((p.line, p.column) == (4, 9))
        }
        // A BOM anywhere else is a character (here, the start of a line that is not name=value).
        let p = try problem("<region> sample=a.wav\n\u{FEFF}lokey=1")
        #expect((p.line, p.column, p.message) == (2, 1, "\"\u{FEFF}lokey=1\" is not an opcode"))
    }

    /// A byte that is not UTF-8 is harmless in a comment, and refused in a value.
    @Test func invalidUTF8() throws {
        let comment = Array("// caf".utf8) + [0xE9] + Array("\n<region> sample=a.wav".utf8)
        #expect(try parseSFZ(comment, file: "a.sfz") { _ in [] }.regions.count == 1)
        let value = Array("<region>\n sample=caf".utf8) + [0xE9, 0xFF] + Array(".wav".utf8)
        #expect(throws: InstrumentError.self) { try parseSFZ(value, file: "a.sfz") { _ in [] } }
        do {
            _ = try parseSFZ(value, file: "a.sfz") { _ in [] }
        } catch {
            let p = error.problems[0]
            #expect((p.line, p.column, p.path) == (2, 12, "sample"))
            #expect(p.message == "byte 0xE9 is not UTF-8" && p.fix == "save the file as UTF-8")
        }
    }

    @Test(arguments: [
        ("<region> sample=a.wav\n  lokey 60", 2, 3, "lokey", "lokey is not followed by =", "opcodes"),
        (
            "<region> sample=a.wav\nlokey = 60", 2, 6, "lokey", "a space between lokey and =",
            "write lokey=VALUE, with no space before or after ="
        ),
        (
            "<region> sample=a.wav\nhikey=  // none", 2, 7, "hikey", "hikey= has no value",
            "give a value after = (like hikey=VALUE), or remove the opcode"
        ),
        (
            "<region> sample=\n", 1, 17, "sample", "sample= has no value",
            "give a value after = (like sample=VALUE), or remove the opcode"
        ),
        ("<region> sample=a.wav\n= 60", 2, 1, "", "\"=\" is not an opcode", "opcodes"),
        ("<region> sample=a.wav\n / x", 2, 2, "", "\"/\" is not an opcode", "opcodes"),
        (
            "<region> sample=a.wav\n<region sample=b.wav", 2, 1, "",
            "the header <region sample=b.wav is not closed with >", "headers"
        ),
        ("<region> sample=a.wav\n <my region>", 2, 2, "", "<my region> is not a header", "headers"),
        ("<region> sample=a.wav <>", 1, 23, "", "<> is not a header", "headers"),
        (
            "<region> sample=a.wav\n#defne $A 1", 2, 1, "", "#defne is not a directive",
            "bellkeys reads #define $NAME value and #include \"FILE.sfz\"; comments start with //"
        ),
        ("# a comment\n<region> sample=a.wav", 1, 1, "", "# is not a directive", "bellkeys reads"),
        (
            "#define A 1\n<region> sample=a.wav", 1, 1, "", "#define needs a $NAME",
            "write #define $NAME value (the name of letters, digits and _)"
        ),
        ("#define $ 1\n<region> sample=a.wav", 1, 1, "", "#define needs a $NAME", "write #define"),
        (
            "<region> sample=$S.wav", 1, 17, "sample", "$S is not defined",
            "define it before its first use: #define $S VALUE"
        ),
        (
            "#define $K lo\n<region> sample=a.wav $Qy=60", 2, 23, "$Qy", "$Qy is not defined",
            "define it before its first use: #define $Qy VALUE"
        ),
        (
            "#define $K l-o\n<region> sample=a.wav $K=60", 2, 23, "$K", "\"l-o\" (from $K) is not an opcode name",
            "a #define used in an opcode's name must give letters, digits and _ only"
        ),
        (
            "<region> sample=a.wav\n#include inc.sfz", 2, 1, "", "#include needs a file name in double quotes",
            "write #include \"FILE.sfz\", a path relative to the top .sfz file's folder"
        ),
        (
            "<region> sample=a.wav\n#include \"inc.sfz", 2, 1, "", "the file name after #include is not closed with \"",
            "write #include"
        ),
        ("<region> sample=a.wav\n#include \"\"", 2, 1, "", "#include \"\" names no file", "write #include"),
        (
            "<region> sample=a.wav\n  #include \"gone.sfz\"", 2, 3, "", "cannot read \"gone.sfz\": no such file",
            "#include paths are relative to the top .sfz file's folder"
        ),
    ])
    func syntaxErrorsPointAtTheirPlace(text: String, line: Int, column: Int, path: String, message: String, fix: String)
        throws
    {
        let p = try problem(text)
        #expect((p.file, p.line, p.column) == ("bells.sfz", line, column))
        #expect(p.path == path)
        #expect(p.message == message)
        if fix != "opcodes" && fix != "headers" { #expect(p.fix.hasPrefix(fix), "\(p.fix)") }
        if fix == "opcodes" {
            #expect(
                p.fix
                    == "write opcodes as name=value (like lokey=60), headers as <region>, comments after // or inside /* */"
            )
        }
        if fix == "headers" {
            #expect(p.fix == "write headers as <control>, <global>, <master>, <group>, <region> or <curve>")
        }
    }

    /// `#define $NAME value`: the value is one word (the line reads on after it), expanded in
    /// names and values, the shortest defined name after `$` taken (ARIA), defined before use.
    @Test func defineExpandsNamesAndValues() throws {
        let sfz = try parseSFZText(
            """
            #define $KEY 60
            #define $DIR Bells\\Soft
            #define $LO lo
            #define $FULL $DIR/$KEY
            <region> sample=$DIR/c$KEY.wav $LOkey=$KEY hikey=$KEY pitch_keycenter=$KEY
            <region> sample=$FULL.wav
            #define $KEY 72
            <region> sample=$KEYS.wav key=$KEY
            """)
        #expect(sfz.regions.map(\.sample) == ["Bells/Soft/c60.wav", "Bells/Soft/60.wav", "72S.wav"])
        #expect(sfz.regions.map(\.loKey) == [60, 0, 72] && sfz.regions.map(\.hiKey) == [60, 127, 72])
        #expect(sfz.regions.map(\.pitchKeycenter) == [60, 60, 72])
        // hikey=$KEY2 is "602": out of range, reported at the value.
        let p = try problem("#define $KEY 60\n<region> sample=a.wav hikey=$KEY2")
        #expect((p.line, p.column, p.message) == (2, 29, "602 is out of range"))
        // The rest of a #define line after its one-word value is read as opcodes.
        #expect(try parseSFZText("<region> sample=a.wav\n#define $A 1 lokey=$A").regions[0].loKey == 1)
        let q = try problem("<region> sample=a.wav\n#define $A 1 2")
        #expect((q.line, q.column, q.path, q.message) == (2, 14, "2", "2 is not followed by ="))
    }

    /// tune=$ keeps the `$` that names nothing (and is then not a number).
    @Test func aDollarBeforeNoNameStays() throws {
        let p = try problem("<region> sample=a$.wav tune=$ 5")
        #expect((p.column, p.message) == (29, "\"$ 5\" is not a number"))
        #expect(try parseSFZText("<region> sample=a$.wav").regions[0].sample == "a$.wav")
    }

    /// #define's expansions cannot grow a value without bound.
    @Test func expansionsAreBounded() throws {
        var text = "#define $A aaaaaaaaaaaaaaaa\n"
        for i in 0..<10 { text += "#define $B\(i) " + String(repeating: i == 0 ? "$A" : "$B\(i - 1)", count: 2) + "\n" }
        let p = try problem(text + "<region> sample=a.wav")
        #expect((p.line, p.message) == (11, "#define expansions make this longer than 8192 characters"))
    }

    /// #include reads through `read`, relative to the top file's folder with `\` turned into
    /// `/`; its statements take their place; locations name the included file.
    @Test func includeReadsThroughTheClosure() throws {
        let files = [
            "common/envelope.sfz": "ampeg_release=7 // long\n#include \"common/keys.sfz\"\n",
            "common/keys.sfz": "\u{FEFF}lokey=60\r\nhikey=$TOP",
            "regions.sfz": "<region> sample=a.wav\n<region> sample=b.wav pitch_keycenter=62",
        ]
        let sfz = try parseSFZText(
            """
            #define $TOP 64
            <group> #include "common\\envelope.sfz" tune=5
            #include "regions.sfz"
            #include "common/keys.sfz"
            <region> sample=c.wav
            """, file: "instruments/bells.sfz", files: files)
        #expect(sfz.includedFiles == ["common/envelope.sfz", "common/keys.sfz", "regions.sfz"])
        #expect(sfz.regions.map(\.sample) == ["a.wav", "b.wav", "c.wav"])
        #expect(sfz.regions.map(\.ampegRelease) == [7, 7, 7] && sfz.regions.map(\.tune) == [5, 5, 5])
        #expect(sfz.regions.map(\.hiKey) == [64, 64, 64])
        #expect(sfz.regions[1].location == SFZLocation(file: "instruments/regions.sfz", line: 2, column: 1))
        #expect(sfz.regions[1].sampleLocation == SFZLocation(file: "instruments/regions.sfz", line: 2, column: 17))
        #expect(sfz.regions[2].location == SFZLocation(file: "instruments/bells.sfz", line: 5, column: 1))
        let p = try problem("<region> sample=a.wav\n#include \"k.sfz\"", files: ["k.sfz": "\n  hikey=x"])
        #expect((p.file, p.line, p.column, p.path) == ("k.sfz", 2, 9, "hikey"))
    }

    @Test func includeRecursionIsRefused() throws {
        let files = ["a.sfz": "#include \"b.sfz\"", "b.sfz": "lokey=1\n #include \"a.sfz\""]
        let p = try problem("<region> sample=x.wav\n#include \"a.sfz\"", files: files)
        #expect((p.file, p.line, p.column) == ("b.sfz", 2, 2))
        #expect(p.message == "#include \"a.sfz\" includes itself: bells.sfz → a.sfz → b.sfz → a.sfz")
        #expect(p.fix == "remove the #include that closes the circle")
        let own = try problem("<region> sample=x.wav\n#include \"bells.sfz\"")
        #expect(own.message == "#include \"bells.sfz\" includes itself: bells.sfz → bells.sfz")
        // The same file included twice, one after the other, is no circle.
        let twice = try parseSFZText(
            "<region> sample=x.wav\n#include \"a.sfz\"\n#include \"a.sfz\"", files: ["a.sfz": "tune=1"])
        #expect(twice.includedFiles == ["a.sfz"] && twice.regions[0].tune == 1)
    }

    @Test func includeDepthIsCapped() throws {
        var files: [String: String] = [:]
        for depth in 1...17 { files["\(depth).sfz"] = "#include \"\(depth + 1).sfz\"" }
        files["17.sfz"] = "tune=17"
        let p = try problem("<region> sample=x.wav\n#include \"1.sfz\"", files: files)
        #expect((p.file, p.line, p.column) == ("16.sfz", 1, 1))
        #expect(p.message == "#include nests more than 16 files deep")
        files["16.sfz"] = "tune=16"
        #expect(try parseSFZText("<region> sample=x.wav\n#include \"1.sfz\"", files: files).regions[0].tune == 16)
    }

    /// Every input of the fuzzing corpus keeps the rules the fuzz target checks.
    @Test(arguments: filesAt(FuzzCorpus.corpus + "/sfz-file"))
    func fuzzCorpusInput(path: String) throws {
        let bytes = try #require(contents(of: path))
        #expect(sfzFileViolations(bytes) == [])
    }

    @Test func theFuzzCorpusIsThere() {
        #expect(filesAt(FuzzCorpus.corpus + "/sfz-file").count >= 8)
    }

    /// The fuzz check passes a file it reads, one that includes and one it refuses.
    @Test func theFuzzCheckPassesGoodAndRefusedFiles() {
        #expect(sfzFileViolations(Array("<region> sample=a.wav".utf8)) == [])
        #expect(sfzFileViolations(Array("<region> sample=a.wav\n#include \"x.sfz\"".utf8)) == [])
        #expect(sfzFileViolations(Array("<region>\n#include \"missing\"".utf8)) == [])
    }
}
