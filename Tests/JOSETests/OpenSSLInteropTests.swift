import Foundation
import Testing
@testable import JOSE

/// Round trips against the `openssl` command line tool: keys and signatures made by one side
/// must be accepted by the other, and a changed message must be rejected by both.
@Suite("Interoperability with the openssl command line")
struct OpenSSLInteropTests {
    private static func genpkeyArguments(_ algorithm: JWSAlgorithm) -> [String] {
        switch algorithm {
        case .rs256: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        case .es256: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
        case .edDSA: ["-algorithm", "ED25519"]
        }
    }

    /// openssl signs: DER ECDSA for ES256, raw for Ed25519 (which needs pkeyutl -rawin).
    private static func opensslSign(_ cli: OpenSSLCommandLine, _ algorithm: JWSAlgorithm, key: String, message: String, signature: String) throws -> Int32 {
        switch algorithm {
        case .rs256, .es256:
            try cli.run(["dgst", "-sha256", "-sign", key, "-out", signature, message]).status
        case .edDSA:
            try cli.run(["pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", message, "-out", signature]).status
        }
    }

    private static func opensslVerify(_ cli: OpenSSLCommandLine, _ algorithm: JWSAlgorithm, publicKey: String, message: String, signature: String) throws -> Bool {
        switch algorithm {
        case .rs256, .es256:
            try cli.run(["dgst", "-sha256", "-verify", publicKey, "-signature", signature, message]).status == 0
        case .edDSA:
            try cli.run(["pkeyutl", "-verify", "-pubin", "-inkey", publicKey, "-rawin", "-in", message, "-sigfile", signature]).status == 0
        }
    }

    @Test(arguments: JWSAlgorithm.allCases)
    func swiftVerifiesSignaturesMadeByOpenSSL(algorithm: JWSAlgorithm) throws {
        let cli = try OpenSSLCommandLine()
        let generated = try cli.run(["genpkey"] + Self.genpkeyArguments(algorithm) + ["-out", "key.pem"])
        try #require(generated.status == 0, "\(generated.output)")
        let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0".utf8)
        try cli.write(message, to: "message.bin")
        try #require(try Self.opensslSign(cli, algorithm, key: "key.pem", message: "message.bin", signature: "signature.bin") == 0)

        let key = try PrivateKey(pkcs8PEM: cli.readText("key.pem"))
        #expect(key.keyType.algorithm == algorithm)
        var signature = try cli.read("signature.bin")
        if algorithm == .es256 {
            signature = try #require(ECDSASignature.raw(fromDER: signature))
        }
        #expect(key.publicKey.verify(signature: signature, message: message, algorithm: algorithm))
        #expect(!key.publicKey.verify(signature: signature, message: message + [0x2E], algorithm: algorithm))

        // openssl's view of the public key is the same key.
        try #require(try cli.run(["pkey", "-in", "key.pem", "-pubout", "-out", "public.pem"]).status == 0)
        #expect(try PublicKey(spkiPEM: cli.readText("public.pem")).spkiDER() == key.publicKey.spkiDER())
    }

    @Test(arguments: JWSAlgorithm.allCases)
    func openSSLVerifiesSignaturesMadeBySwift(algorithm: JWSAlgorithm) throws {
        let cli = try OpenSSLCommandLine()
        let key = try PrivateKey.generate(for: algorithm)
        try cli.write(key.publicKey.spkiPEM(), to: "public.pem")
        try cli.write(key.pkcs8PEM(), to: "key.pem")
        let message = Array("eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ5In0".utf8)
        try cli.write(message, to: "message.bin")
        try cli.write(message + [0x2E], to: "other.bin")

        var signature = try key.sign(message: message, algorithm: algorithm)
        if algorithm == .es256 {
            signature = try #require(ECDSASignature.der(fromRaw: signature))
        }
        try cli.write(signature, to: "signature.bin")
        #expect(try Self.opensslVerify(cli, algorithm, publicKey: "public.pem", message: "message.bin", signature: "signature.bin"))
        #expect(try !Self.opensslVerify(cli, algorithm, publicKey: "public.pem", message: "other.bin", signature: "signature.bin"))

        // openssl reads Swift's PKCS#8 export and derives the same public key.
        let derived = try cli.run(["pkey", "-in", "key.pem", "-pubout"])
        #expect(derived.status == 0)
        #expect(derived.output == key.publicKey.spkiPEM())
    }

    @Test func rsa1024AndP384KeysFromOpenSSLAreRejected() throws {
        let cli = try OpenSSLCommandLine()
        try #require(try cli.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "rsa1024.pem"]).status == 0)
        let small = #expect(throws: JOSEError.self) { try PrivateKey(pkcs8PEM: cli.readText("rsa1024.pem")) }
        #expect(small?.code == .keyTooSmall)

        try #require(try cli.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "p384.pem"]).status == 0)
        let curve = #expect(throws: JOSEError.self) { try PrivateKey(pkcs8PEM: cli.readText("p384.pem")) }
        #expect(curve?.code == .unsupportedKeyType)
    }

    @Test func ecdsaSignatureConversionRoundTrips() throws {
        let raw = Base64URL.decode("DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q")!
        let der = try #require(ECDSASignature.der(fromRaw: raw))
        #expect(der.first == 0x30)
        #expect(ECDSASignature.raw(fromDER: der) == raw)
        // Small r and s keep their leading zeros in raw form.
        let small = [UInt8](repeating: 0, count: 31) + [5] + [UInt8](repeating: 0, count: 30) + [1, 2]
        #expect(ECDSASignature.raw(fromDER: try #require(ECDSASignature.der(fromRaw: small))) == small)
        #expect(ECDSASignature.der(fromRaw: Array(raw.dropLast())) == nil)
        #expect(ECDSASignature.raw(fromDER: der + [0]) == nil)
        #expect(ECDSASignature.raw(fromDER: [0x30, 0x00]) == nil)
    }
}
