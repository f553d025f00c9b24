import Testing

@testable import CoexistPublish

/// Publish acknowledgements read without a JSON decoder give what the decoder gives, and anything the
/// fast path does not know goes to the decoder.
@Suite struct AckReplyTests {
    @Test func acknowledgementsReadAsTheDecoderReadsThem() {
        for text in [
            #"{"stream":"BENCH","seq":1}"#, #"{"stream":"BENCH","seq":18446744073709551615}"#,
            #"{"stream":"BENCH","seq":7,"duplicate":true}"#, #"{"stream":"BENCH","domain":"hub","seq":9}"#,
            #"{"stream":"BENCH","seq":3,"duplicate":false}"#, #"{"stream":"OTHER","seq":4}"#,
            #"{"stream":"BENCH","seq":0}"#,
            // As nats-server 2.9 writes them (measured: a space after the stream and the duplicate flag's
            // colon), and any JSON whitespace between tokens.
            #"{"stream":"BENCH", "seq":1}"#, #"{"stream":"BENCH", "seq":1,"duplicate": true}"#,
            "{ \"stream\" :\t\"BENCH\" ,\r\n\"seq\": 5 , \"duplicate\" : false }",
        ] {
            #expect(JetStream.plainAck(Array(text.utf8)) != nil, "\(text)")
            #expect(
                JetStream.outcome(Array(text.utf8), stream: "BENCH")
                    == JetStream.decodedOutcome(Array(text.utf8), stream: "BENCH"),
                "\(text)"
            )
        }
    }

    @Test func otherRepliesGoToTheDecoder() {
        for text in [
            #"{"error":{"code":400,"err_code":10070,"description":"wrong last msg ID: x"}}"#,
            #"{"stream":"BEN\"CH","seq":1}"#, #"{"stream":"BENCH","seq":18446744073709551616}"#,
            #"{"stream":"BENCH","seq":1} "#, #"{"stream":"BENCH","seq":1,}"#, #"{"stream":"BENCH"}"#,
            #"{"stream":"BENCH","seq":-1}"#, #"{"stream":"BENCH","seq":1,"duplicate":tru}"#, "{", "",
            #"{"stream":"BENCH","seq":1.5}"#, #"{"stream":"X","stream":"BENCH","seq":1}"#,
            #"{"stream":"BENCH","seq":1,"duplicate":1}"#, #"{"stream":"BENCH","seq":1,"duplicate":"true"}"#,
            #"{"stream":"BENCH","seq":01}"#, #"{"stream":"BENCH","seq":"1"}"#, #"{"stream":1,"seq":1}"#,
            #"{"stream":"BENCH","seq":1,"error":"x"}"#, "{\"stream\":\"BENCH\u{e9}\",\"seq\":1}",
            #"{"stream":"BENCH","seq":1,"seq":2}"#, #"{"stream":"BENCH","seq":1,"duplicate":true,"duplicate":false}"#,
            #"{"stream":"BENCH","domain":"a","seq":1,"domain":"b"}"#, #"{"stream":"BENCH","seq":1,"duplicate":truex}"#,
            #"{"stream":"BENCH","seq":1,"duplicate":t"#, #"{"stream":"BENCH","seq":0"#, #"{"stream":"BENCH","seq":"#,
            #"{"stream":"BENCH","seq""#, "{}", #"{"stream":"BENCH","seq":1,"k"}"#, #"{"stream":"BENCH","seq":null}"#,
            "{\"stream\":\"BENCH\",\"seq\":1,"
                + (0..<17).map { "\"k\($0)\":1" }.joined(separator: ",") + "}",
            #"{"stream":"BENCH", "seq":1 , }"#, #"{"stream":"BENCH","seq":1 2}"#,
            "{\"stream\":\"BENCH\",\u{a0}\"seq\":1}",
        ] {
            #expect(JetStream.plainAck(Array(text.utf8)) == nil, "\(text)")
        }
        let refusal = #"{"error":{"code":400,"err_code":10070,"description":"wrong last msg ID: x"}}"#
        #expect(
            JetStream.outcome(Array(refusal.utf8), stream: "BENCH")
                == .refused(code: 10_070, description: "wrong last msg ID: x")
        )
    }

    @Test func replySubjectsGiveTheNumberAfterTheirLastDot() {
        #expect(JetStream.replyNumber("_INBOX.abc.17") == 17)
        #expect(JetStream.replyNumber("_INBOX.abc.0") == 0)
        #expect(JetStream.replyNumber("17") == 17)
        #expect(JetStream.replyNumber("_INBOX.abc.18446744073709551615") == UInt64.max)
        for subject in ["_INBOX.abc.", "_INBOX.abc", "_INBOX.abc.18446744073709551616", "_INBOX.1.x2", "", "."] {
            #expect(JetStream.replyNumber(subject) == nil, "\(subject)")
        }
    }
}
