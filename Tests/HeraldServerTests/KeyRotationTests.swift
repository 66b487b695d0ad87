import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("Realm signing keys and access tokens")
struct KeyRotationTests {
    /// Verifies an access token using only the realm's published JWKS and the JOSE primitives.
    static func verifyIndependently(_ token: String, jwks: [UInt8]) throws -> [String: JSONValue] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let headerBytes = try #require(Base64URL.decode(parts[0]))
        let header = try #require(try JSONValue.parse(headerBytes).objectValue)
        let kid = try #require(header["kid"]?.stringValue)
        let algorithm = try #require(header["alg"]?.stringValue.flatMap(JWSAlgorithm.init(rawValue:)))
        #expect(header["typ"] == "at+jwt")
        let document = try JSONValue.parse(jwks)
        let documents = try #require(document["keys"]?.arrayValue)
        let entry = try #require(documents.first { $0["kid"]?.stringValue == kid })
        let jwk = try JSONDecoder().decode(JWK.self, from: Data(entry.serialized()))
        let key = try jwk.publicKey()
        let signature = try #require(Base64URL.decode(parts[2]))
        let signingInput = Array("\(parts[0]).\(parts[1])".utf8)
        #expect(key.verify(signature: signature, message: signingInput, algorithm: algorithm), "signature")
        let payloadBytes = try #require(Base64URL.decode(parts[1]))
        return try #require(try JSONValue.parse(payloadBytes).objectValue)
    }

    @Test("access tokens verify against jwks.json alone, for ES256, RS256 and EdDSA realms, with the RFC 9068 claims",
          arguments: ["ES256", "RS256", "EdDSA"])
    func accessTokenVerifiesAgainstJWKS(algorithm: String) async throws {
        try await NativeLoginFixture.with(realmFields: ["signingAlgorithm": .string(algorithm)]) { fixture in
            let login = try await fixture.loginOK()
            let token = login["accessToken"]?.stringValue ?? ""
            let jwks = try await fixture.send("GET", "/api/oauth/acme/jwks.json")
            #expect(jwks.status == 200)
            let claims = try Self.verifyIndependently(token, jwks: jwks.body)
            #expect(try CompactJWS(parsing: token).header.alg == algorithm)
            #expect(claims["iss"]?.stringValue == fixture.herald.application.services.issuers.issuer(realmID: "acme"))
            #expect(claims["sub"] == login["userId"])
            #expect(claims["aud"] == "ios-app")
            #expect(claims["client_id"] == "ios-app")
            #expect(claims["scope"] == "openid profile email")
            #expect(claims["sid"]?.stringValue?.isEmpty == false)
            #expect(claims["jti"]?.stringValue?.isEmpty == false)
            let iat = try #require(claims["iat"]?.int64Value)
            #expect(claims["exp"]?.int64Value == iat + 900)
        }
    }

    @Test("rotation activates a new key; tokens of the old key keep verifying and stay in jwks.json")
    func rotationKeepsOldTokensValid() async throws {
        try await NativeLoginFixture.with { fixture in
            let before = try await fixture.loginOK()
            let oldToken = before["accessToken"]?.stringValue ?? ""
            let oldKid = try CompactJWS(parsing: oldToken).header.kid

            let rotated = try await fixture.admin("POST", "/api/admin/realms/acme/keys/rotate", reason: "scheduled")
            #expect(rotated.status == 201)
            let newKid = rotated.json["kid"]?.stringValue
            #expect(newKid != nil && newKid != oldKid)
            #expect(rotated.json["status"] == "active")

            let after = try await fixture.loginOK()
            let newToken = after["accessToken"]?.stringValue ?? ""
            #expect(try CompactJWS(parsing: newToken).header.kid == newKid)

            let jwks = try await fixture.send("GET", "/api/oauth/acme/jwks.json").body
            _ = try Self.verifyIndependently(oldToken, jwks: jwks)
            _ = try Self.verifyIndependently(newToken, jwks: jwks)
            #expect(try await fixture.me(oldToken).status == 200)
            #expect(try await fixture.me(newToken).status == 200)

            let keys = try await fixture.admin("GET", "/api/admin/realms/acme/keys")
            #expect(keys.status == 200)
            #expect(keys.items.map { $0["status"] } == ["active", "retired"])
            #expect(keys.items.first?["kid"]?.stringValue == newKid)
            // A retired key is published as long as the longest token it may have signed (+ leeway).
            let retired = try #require(keys.items.last)
            let retiredAt = try #require(retired["retiredAt"]?.int64Value)
            #expect(retired["publishUntil"]?.int64Value == retiredAt + 3600 + 300)
            #expect(!keys.text.contains("private") && !keys.text.contains("\"d\""))

            let audit = try await fixture.admin("GET", "/api/admin/audit")
            #expect(audit.items.contains { $0["action"] == "keys.rotate" && $0["reason"] == "scheduled" })
            #expect(try await fixture.admin("POST", "/api/admin/realms/nope/keys/rotate").status == 404)
            #expect(try await fixture.admin("GET", "/api/admin/realms/nope/keys").status == 404)
            #expect(try await fixture.admin("POST", "/api/admin/realms/acme/keys/rotate", token: nil).status == 401)
        }
    }
}
