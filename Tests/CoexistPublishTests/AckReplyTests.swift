import Foundation
import Testing

@testable import CoexistPublish

/// Publish acknowledgements read without a JSON decoder give what the decoder gives, and anything the
/// fast path does not know goes to the decoder.
@Suite struct AckReplyTests {
    /// The outcome through the decoder alone (the fast path's reference).
    private func decoded(_ text: String, stream: String) -> JetStream.Outcome {
        struct Reply: Decodable {
            struct Failure: Decodable {
                var code: Int?
                var err_code: Int?
                var description: String?
            }
            var stream: String?
            var seq: UInt64?
            var duplicate: Bool?
            var error: Failure?
        }
        guard let reply = try? JSONDecoder().decode(Reply.self, from: Data(text.utf8)) else {
            return .refused(code: 0, description: text)
        }
        if let error = reply.error {
            return .refused(code: error.err_code ?? error.code ?? 0, description: error.description ?? "")
        }
        guard reply.stream == stream, let sequence = reply.seq, sequence > 0 else {
            return .refused(code: 0, description: "not stored: \(text)")
        }
        return .acknowledged(JetStream.Ack(sequence: sequence, duplicate: reply.duplicate ?? false))
    }

    @Test func acknowledgementsReadAsTheDecoderReadsThem() {
        for text in [
            #"{"stream":"BENCH","seq":1}"#, #"{"stream":"BENCH","seq":18446744073709551615}"#,
            #"{"stream":"BENCH","seq":7,"duplicate":true}"#, #"{"stream":"BENCH","domain":"hub","seq":9}"#,
            #"{"stream":"BENCH","seq":3,"duplicate":false}"#, #"{"stream":"OTHER","seq":4}"#,
            #"{"stream":"BENCH","seq":0}"#,
        ] {
            #expect(JetStream.plainAck(Array(text.utf8)) != nil, "\(text)")
            #expect(JetStream.outcome(Array(text.utf8), stream: "BENCH") == decoded(text, stream: "BENCH"), "\(text)")
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
        ] {
            #expect(JetStream.plainAck(Array(text.utf8)) == nil, "\(text)")
        }
        let refusal = #"{"error":{"code":400,"err_code":10070,"description":"wrong last msg ID: x"}}"#
        #expect(
            JetStream.outcome(Array(refusal.utf8), stream: "BENCH")
                == .refused(code: 10_070, description: "wrong last msg ID: x")
        )
    }
}
