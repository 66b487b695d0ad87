import Testing
@testable import Realms

@Suite("fullName string split (issue #16)")
struct PersonNameFullNameTests {
    @Test("splits at the last space: everything before is the given name, the last word the family name")
    func splitsAtTheLastSpace() {
        #expect(PersonName(fullName: "Jane Q Public")
            == PersonName(givenName: "Jane Q", familyName: "Public", displayName: "Jane Q Public"))
        #expect(PersonName(fullName: "Ada Lovelace")
            == PersonName(givenName: "Ada", familyName: "Lovelace", displayName: "Ada Lovelace"))
    }

    @Test("a name without a space (Chinese) is the given name whole, with no family name")
    func nameWithoutSpaceIsGivenNameWhole() {
        #expect(PersonName(fullName: "张三") == PersonName(givenName: "张三", familyName: nil, displayName: "张三"))
        #expect(PersonName(fullName: "Cher") == PersonName(givenName: "Cher", familyName: nil, displayName: "Cher"))
    }

    @Test("leading and trailing whitespace is dropped before splitting and from the display string")
    func surroundingWhitespaceIsTrimmed() {
        #expect(PersonName(fullName: "  Jane Q Public \n")
            == PersonName(givenName: "Jane Q", familyName: "Public", displayName: "Jane Q Public"))
        #expect(PersonName(fullName: " 张三 ") == PersonName(givenName: "张三", familyName: nil, displayName: "张三"))
        // A run of spaces before the last word does not leave a space on the given name.
        #expect(PersonName(fullName: "Jane   Public")
            == PersonName(givenName: "Jane", familyName: "Public", displayName: "Jane   Public"))
    }

    @Test("an ideographic space separates like an ASCII one")
    func ideographicSpaceSeparates() {
        #expect(PersonName(fullName: "山田\u{3000}太郎")
            == PersonName(givenName: "山田", familyName: "太郎", displayName: "山田\u{3000}太郎"))
    }

    @Test("an empty or blank string is no name at all")
    func blankIsNoName() {
        #expect(PersonName(fullName: "").isEmpty)
        #expect(PersonName(fullName: "   \t").isEmpty)
    }
}
