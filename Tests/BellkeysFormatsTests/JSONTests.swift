import BellkeysFormats
import Testing

@Suite struct JSONParsing {
    func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode { try parseJSON(Array(text.utf8)) }

    @Test func valuesKeepTheirLineAndColumn() throws {
        let node = try parse("{\n  \"a\": [1, \"x\"],\n  \"b\": {\"c\": null}\n}")
        guard case .object(let members) = node.value, case .array(let items) = members[0].value.value else {
            Issue.record("wrong shape")
            return
        }
        #expect(members.map(\.key) == ["a", "b"])
        #expect((members[0].value.line, members[0].value.column) == (2, 8))
        #expect((items[1].line, items[1].column) == (2, 12))
        #expect((members[1].value.line, members[1].value.column) == (3, 8))
    }

    @Test func stringsAndNumbers() throws {
        let node = try parse(#"["a\"b\\c\u00e9\ud83d\udd14", -1.5e2, 0, true, false]"#)
        guard case .array(let items) = node.value, case .string(let s) = items[0].value,
            case .number(let n) = items[1].value
        else {
            Issue.record("wrong shape")
            return
        }
        #expect(s == "a\"b\\cé🔔")
        #expect(n == -150)
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, 9, "trailing comma"),
        ("{\"a\": 1, \"a\": 2}", 1, 10, "appears twice"),
        ("[1 2]", 1, 4, "expected ',' or ']'"),
        ("{\"a\" 1}", 1, 6, "expected ':'"),
        ("\"abc", 1, 5, "ends inside a string"),
        ("[01]", 1, 3, "expected ',' or ']'"),
        ("{} x", 1, 4, "unexpected text"),
        ("", 1, 1, "ends where a value"),
        ("[1e999]", 1, 2, "out of range"),
        ("{\"a\": tru}", 1, 7, "expected 'true'"),
    ])
    func syntaxErrorsPointAtTheProblem(text: String, line: Int, column: Int, message: String) {
        do {
            _ = try parse(text)
            Issue.record("\(text) parsed")
        } catch {
            #expect((error.line, error.column) == (line, column), "\(text): \(error.message)")
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let text = String(repeating: "[", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try parse(text) }
    }
}
