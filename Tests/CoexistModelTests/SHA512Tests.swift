import CoexistModel
import Testing

/// SHA-512 against the FIPS 180-4 examples and a message of several blocks.
@Suite struct SHA512Tests {
    func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
    }

    @Test func knownAnswers() {
        #expect(
            hex(SHA512.digest([]))
                == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
                + "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        )
        #expect(
            hex(SHA512.digest(Array("abc".utf8)))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        let long = (0..<5).flatMap { _ in (0...255).map { UInt8($0) } }
        #expect(
            hex(SHA512.digest(long))
                == "c93f55ccf2fa8c82699ff9b58afe3591242b135d908a6d865e17e38adb41c21d"
                + "1d5359e51273036373d54d20b5659cc87e6e7b381ff027d33f971416cc590f90"
        )
    }
}
