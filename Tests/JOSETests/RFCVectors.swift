import Foundation
import HeraldTestSupport
@testable import JOSE

/// Published test vectors, copied byte for byte from RFC 7515 appendix A and RFC 8037 appendix A.
enum RFCVectors {
    /// RFC 7515 A.2/A.3 payload segment: {"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}
    static let payloadSegment = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"

    // MARK: RFC 7515 A.2 (RS256)

    static let rs256Compact = "eyJhbGciOiJSUzI1NiJ9." + payloadSegment + "."
        + "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7"
        + "AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4"
        + "BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K"
        + "0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqv"
        + "hJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrB"
        + "p0igcN_IoypGlUPQGe77Rw"

    static let rsaN = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddx"
        + "HmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMs"
        + "D1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSH"
        + "SXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdV"
        + "MTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8"
        + "NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let rsaE = "AQAB"
    static let rsaD = "Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97I"
        + "jlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0"
        + "BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn"
        + "439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYT"
        + "CBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLh"
        + "BOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ"
    static let rsaP = "4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdi"
        + "YrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPG"
        + "BY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc"
    static let rsaQ = "uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxa"
        + "ewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA"
        + "-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc"
    static let rsaDP = "BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3Q"
        + "CLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb"
        + "34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0"
    static let rsaDQ = "h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa"
        + "7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-ky"
        + "NlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU"
    static let rsaQI = "IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2o"
        + "y26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLU"
        + "W0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U"

    static var rsaPublicJWK: JWK { JWK(kty: "RSA", n: rsaN, e: rsaE) }

    /// The A.2 private key as PKCS#8 DER, assembled from the RFC's JWK members.
    static var rsaPrivatePKCS8: [UInt8] {
        let members = [rsaN, rsaE, rsaD, rsaP, rsaQ, rsaDP, rsaDQ, rsaQI].map { DER.integer(Base64URL.decode($0)!) }
        let rsaPrivateKey = DER.sequence([DER.integer([0])] + members)
        let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
        return DER.sequence([DER.integer([0]), DER.sequence([rsaEncryption, [0x05, 0x00]]), DER.octetString(rsaPrivateKey)])
    }

    // MARK: RFC 7515 A.3 (ES256)

    static let es256Compact = "eyJhbGciOiJFUzI1NiJ9." + payloadSegment + "."
        + "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
    static let ecX = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let ecY = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    static let ecD = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"

    static var ecPublicJWK: JWK { JWK(kty: "EC", crv: "P-256", x: ecX, y: ecY) }

    /// The A.3 private key as PKCS#8 DER (SEC 1 ECPrivateKey without the optional public key).
    static var ecPrivatePKCS8: [UInt8] {
        let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
        let prime256v1: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        let ecPrivateKey = DER.sequence([DER.integer([1]), DER.octetString(Base64URL.decode(ecD)!)])
        return DER.sequence([DER.integer([0]), DER.sequence([ecPublicKey, prime256v1]), DER.octetString(ecPrivateKey)])
    }

    // MARK: RFC 8037 A.1–A.4 (Ed25519)

    static let edD = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
    static let edX = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    static let edThumbprint = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    static let edPayload = "Example of Ed25519 signing"
    static let edCompact = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc."
        + "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"

    static var edPublicJWK: JWK { JWK(kty: "OKP", crv: "Ed25519", x: edX) }

    /// The A.1 private key as PKCS#8 DER (RFC 8410: the 32-byte seed in an inner OCTET STRING).
    static var edPrivatePKCS8: [UInt8] {
        [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20] + Base64URL.decode(edD)!
    }

    /// Splits a compact JWS into (signing input, signature bytes) without going through CompactJWS.
    static func split(_ compact: String) -> (signingInput: [UInt8], signature: [UInt8]) {
        let lastDot = compact.lastIndex(of: ".")!
        return (Array(compact[..<lastDot].utf8), Base64URL.decode(compact[compact.index(after: lastDot)...])!)
    }
}

/// Just enough DER to wrap RFC key components into PKCS#8.
enum DER {
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        if count <= 0xFF { return [0x81, UInt8(count)] }
        return [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
    }

    static func tagged(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }

    /// A non-negative INTEGER from big-endian bytes.
    static func integer(_ bytes: [UInt8]) -> [UInt8] {
        var content = Array(bytes.drop(while: { $0 == 0 }))
        if content.isEmpty || content[0] & 0x80 != 0 { content.insert(0, at: 0) }
        return tagged(0x02, content)
    }

    static func sequence(_ elements: [[UInt8]]) -> [UInt8] { tagged(0x30, elements.flatMap { $0 }) }
    static func octetString(_ content: [UInt8]) -> [UInt8] { tagged(0x04, content) }
}

/// Runs the `openssl` command line tool in a private temporary directory.
final class OpenSSLCommandLine {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("jose-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func write(_ bytes: [UInt8], to name: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path(name))) }
    func write(_ text: String, to name: String) throws { try write(Array(text.utf8), to: name) }
    func read(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name)))) }
    func readText(_ name: String) throws -> String { String(decoding: try read(name), as: UTF8.self) }

    /// Runs `openssl arguments…` and returns its exit status and combined output.
    @discardableResult
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let openssl = try ChildProcess(executable: "/usr/bin/openssl", arguments: arguments, workingDirectory: directory.path,
                                       standardOutput: .pipe, standardError: .standardOutput)
        let output = openssl.standardOutput?.readDataToEndOfFile() ?? Data()
        let termination = try openssl.waitForExit()
        // Foundation's `terminationStatus` was the exit code, or the signal for a killed child.
        return (termination.exitCode ?? termination.signal ?? termination.status, String(decoding: output, as: UTF8.self))
    }
}
