import Export
import Testing

/// ``Export/PostgresText``: what PostgreSQL cannot store, and how the export writes it (issue 42 item 8).
@Suite struct PostgresTextTests {
    /// The escape keeps a JSON text's other escapes: a backslash written as `\\` before `u0000` is no NUL.
    @Test(arguments: [
        (#"{"r":"a\u0000b"}"#, #"{"r":"a\\u0000b"}"#),
        (#"{"r":"a\\u0000b"}"#, #"{"r":"a\\u0000b"}"#),
        (#"{"r":"\\\u0000"}"#, #"{"r":"\\\\u0000"}"#),
        (#"{"r":"\u00e9\u0000","s":"\u0000"}"#, #"{"r":"\u00e9\\u0000","s":"\\u0000"}"#),
        (#"{"r":"plain \"quoted\""}"#, #"{"r":"plain \"quoted\""}"#),
    ])
    func jsonKeepsEverythingButTheNul(json: String, stored: String) {
        #expect(PostgresText.json(json) == stored)
    }

    @Test func textLosesOnlyItsNul() {
        #expect(PostgresText.text("a\u{0}b\u{0}") == #"a\u0000b\u0000"#)
        #expect(PostgresText.text("é ✓ \u{1}") == "é ✓ \u{1}")
        #expect(PostgresText.isStorable("a\u{0}b") == false)
        #expect(PostgresText.isStorable("a\u{1}b é"))
    }
}
