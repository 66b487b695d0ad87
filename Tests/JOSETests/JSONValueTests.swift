import Testing
import JOSE

@Suite("Strict JSON")
struct JSONValueTests {
    private func parse(_ text: String) throws(JOSEError) -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    @Test func parsesAllValueKindsKeepingBooleansApartFromNumbers() throws {
        let value = try parse(#" { "s":"x\u00e9\n\ud83d\ude00", "n":-12.5e1, "i":0, "t":true, "f":false, "z":null, "a":[1,"2",[]], "o":{} } "#)
        #expect(value["s"] == .string("xé\n😀"))
        #expect(value["n"] == .number(-125))
        #expect(value["i"] == .number(0))
        #expect(value["t"] == .bool(true))
        #expect(value["t"]?.doubleValue == nil)
        #expect(value["f"]?.boolValue == false)
        #expect(value["i"]?.boolValue == nil)
        #expect(value["z"]?.isNull == true)
        #expect(value["a"] == .array([.number(1), .string("2"), .array([])]))
        #expect(value["o"] == .object([:]))
        #expect(try parse("1").int64Value == 1)
        #expect(try parse("1.5").int64Value == nil)
    }

    @Test(arguments: [
        #"{"a":1,"a":2}"#, #"{"a":{"b":1,"b":1}}"#, #"[{"x":true,"y":0,"x":false}]"#,
    ])
    func duplicateKeysAreMalformed(text: String) {
        let error = #expect(throws: JOSEError.self) { try parse(text) }
        #expect(error?.code == .malformed)
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", #"{"a":1,}"#, #"{a:1}"#, "{'a':1}", "01", "-", "1.", ".5", "+1", "1e", "NaN", "Infinity",
        "1e999", "tru", "nul", #""unterminated"#, "\"tab\there\"", #""\x""#, #""\ud800""#, #""\udc00x""#, #""\ud800\u0041""#,
        "{} {}", "[1] x", "\u{FEFF}{}",
    ])
    func rejectsInvalidJSON(text: String) {
        #expect(throws: JOSEError.self) { try parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JOSEError.self) { try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JOSEError.self) { try JSONValue.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func nestingIsCappedAt64() throws {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try parse(deepest)
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JOSEError.self) { try parse(tooDeep) }
        let hostile = String(repeating: #"{"a":"#, count: 100_000)
        #expect(throws: JOSEError.self) { try parse(hostile) }
    }

    @Test func serializesCompactlyWithSortedKeysAndIntegralNumbers() throws {
        let value: JSONValue = ["b": [true, nil, 1_300_819_380, 0.5, -3], "a": "q\"\\\n\u{1}é"]
        let text = String(decoding: value.serialized(), as: UTF8.self)
        #expect(text == #"{"a":"q\"\\\n\u0001é","b":[true,null,1300819380,0.5,-3]}"#)
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test func indentedOutputIsTheSameJSONOneMemberPerLine() throws {
        let value: JSONValue = ["b": [true, nil, 1_300_819_380, 0.5, ["z": [], "y": [:]]], "a": "q\"\n"]
        let text = String(decoding: value.serialized(indentedBy: 2), as: UTF8.self)
        #expect(text == """
            {
              "a": "q\\"\\n",
              "b": [
                true,
                null,
                1300819380,
                0.5,
                {
                  "y": {},
                  "z": []
                }
              ]
            }
            """)
        #expect(try JSONValue.parse(value.serialized(indentedBy: 2)) == value)
        #expect(String(decoding: JSONValue.array([]).serialized(indentedBy: 2), as: UTF8.self) == "[]")
        #expect(value.serialized(indentedBy: 0) == value.serialized())
    }

    @Test func stringsWithoutSpecialCharactersAreCopiedAndOthersEscapedShortOrLong() {
        func quoted(_ string: String) -> String {
            var output: [UInt8] = []
            JSONEscaping.appendQuoted(string, to: &output)
            return String(decoding: output, as: UTF8.self)
        }
        for plain in ["", "plain", "a/b c", "émoji 🙂", "\u{7F}", String(repeating: "x", count: 5_000)] {
            #expect(quoted(plain) == "\"" + plain + "\"", "\(plain.prefix(20))")
        }
        // Each special character alone and past the first 16 bytes (a long string, not a small one).
        let long = String(repeating: "x", count: 40)
        for (special, escaped) in [("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{0}", #"\u0000"#), ("\u{1F}", #"\u001f"#)] {
            #expect(quoted(special) == "\"" + escaped + "\"")
            #expect(quoted(long + special + long) == "\"" + long + escaped + long + "\"")
            #expect(JSONValue.string(special).serialized() == Array(quoted(special).utf8))  // the writer's strings
        }
    }

    @Test func objectWriterWritesWhatASortedJSONValueWrites() throws {
        var writer = JSONObjectWriter(capacity: 8)  // small, so the appends regrow through nesting
        writer.add("a", "q\"\\\n\u{1}é")
        writer.add("b", true)
        writer.add("e", 0)
        writer.add("f", -1_300_819_380)
        writer.add("g", String?.none)
        writer.add("h", ["z": [1, 0.5, nil], "y": [:]] as JSONValue)
        writer.addObject("i") { nested in
            nested.add("k", false)
            nested.addObject("l") { _ in }
        }
        writer.addArray("j", count: 2) { element, index in
            element.add("n", index + 3)
            element.add("o", "x")
        }
        writer.addArray("m", count: 0) { _, _ in }
        let expected: JSONValue = [
            "a": "q\"\\\n\u{1}é", "b": true, "e": 0, "f": -1_300_819_380, "g": nil,
            "h": ["z": [1, 0.5, nil], "y": [:]], "i": ["k": false, "l": [:]],
            "j": [["n": 3, "o": "x"], ["n": 4, "o": "x"]], "m": [],
        ]
        #expect(String(decoding: writer.finish(), as: UTF8.self) == String(decoding: expected.serialized(), as: UTF8.self))
        #expect(JSONObjectWriter().finish() == Array("{}".utf8))
    }

    @Test func integersAreWrittenInFullDigitByDigit() {
        var writer = JSONObjectWriter()
        writer.add("max", Int64.max)
        writer.add("min", Int64.min)
        writer.add("nine", 9)
        writer.add("ten", -10)
        #expect(String(decoding: writer.finish(), as: UTF8.self)
                    == #"{"max":9223372036854775807,"min":-9223372036854775808,"nine":9,"ten":-10}"#)
    }
}
