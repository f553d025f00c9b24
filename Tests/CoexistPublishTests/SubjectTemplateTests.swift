import Testing

@testable import CoexistPublish

/// Subjects are the template with each placeholder replaced by its value reduced to a subject token.
@Suite struct SubjectTemplateTests {
    @Test func placeholdersTakeTheirValuesAsTokens() {
        let template = SubjectTemplate("coexist.{store}.{entity}.{change}")
        #expect(template.filter == "coexist.*.*.*")
        #expect(template.filter(store: "A-1") == "coexist.A-1.*.*")
        #expect(
            template.subject(store: "6F1C-2B", entity: "Task", change: "insert", side: "legacy")
                == "coexist.6F1C-2B.Task.insert"
        )
        // No entity, an empty value, and what a token may not hold (separators, wildcards, spaces, non-ASCII).
        #expect(template.subject(store: "", entity: nil, change: "delete", side: "new") == "coexist._._.delete")
        #expect(
            template.subject(store: "s", entity: "Ta sk.*>é", change: "update", side: "new")
                == "coexist.s.Ta_sk_____.update"
        )
    }

    @Test func textAroundPlaceholdersAndUnknownOnesAreKept() {
        #expect(
            SubjectTemplate("x{store}y.{side}-{change}.{unknown}.end").subject(
                store: "S",
                entity: "E",
                change: "insert",
                side: "legacy"
            ) == "xSy.legacy-insert._.end"
        )
        // An unclosed brace is text; empty tokens stay empty.
        #expect(
            SubjectTemplate("a.{store.b..{entity}").subject(store: "S", entity: "E", change: "c", side: "d")
                == "a.{store.b..E"
        )
        #expect(SubjectTemplate("plain").subject(store: "S", entity: nil, change: "c", side: "d") == "plain")
        // The first `}` after a `{` closes it.
        #expect(SubjectTemplate("{a{store}}").subject(store: "S", entity: nil, change: "c", side: "d") == "_}")
    }

    @Test func headerValuesLoseControlCharactersAndStopAt256Bytes() {
        #expect(ChangeMessage.headerValue("old-app 1.2") == "old-app 1.2")
        #expect(ChangeMessage.headerValue("a\r\nX-Injected: 1\u{7F}b") == "aX-Injected: 1b")
        #expect(ChangeMessage.headerValue("café") == "café")
        #expect(ChangeMessage.headerValue(String(repeating: "x", count: 300)) == String(repeating: "x", count: 256))
        // A character that would cross the limit is left out whole.
        #expect(
            ChangeMessage.headerValue(String(repeating: "x", count: 255) + "é") == String(repeating: "x", count: 255)
        )
    }
}
