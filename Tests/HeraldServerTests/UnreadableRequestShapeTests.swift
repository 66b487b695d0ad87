import Foundation
import JOSE
import Testing
@testable import HeraldServer

/// What the HTTP layer's own 400 (a path that does not decode) looks like per route family:
/// OAuth clients parse RFC 6749 §5.2 / RFC 6750 §3 bodies on the protocol endpoints, Herald's
/// clients the envelope everywhere else.
@Suite("Unreadable requests: the error shape of the route they aimed at")
struct UnreadableRequestShapeTests {
    /// Segments that fail to decode: invalid UTF-8, a control character, a NUL.
    static let unreadableRealms = ["%FF", "a%01b", "ac%00me", "%C3%28"]
    static let oauthEndpoints: [(method: String, endpoint: String)] = [
        ("GET", "authorize"), ("POST", "token"), ("POST", "revoke"), ("POST", "introspect"),
        ("GET", "userinfo"), ("POST", "userinfo"),
    ]

    @Test("a path segment that does not decode answers 400 invalid_request in the OAuth shape on the protocol endpoints")
    func oauthEndpointsAnswerOAuthShape() async throws {
        try await RunningHerald.with { herald in
            try await herald.createRealm("acme")
            for realm in Self.unreadableRealms {
                for (method, endpoint) in Self.oauthEndpoints {
                    let path = "/api/oauth/\(realm)/\(endpoint)"
                    let response = try await herald.send(method, path, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                         body: Array("grant_type=refresh_token".utf8))
                    #expect(response.status == 400, "\(method) \(path)")
                    #expect(response.header("Content-Type") == "application/json", "\(method) \(path)")
                    #expect(response.json["error"]?.stringValue == "invalid_request", "\(method) \(path)")
                    #expect(response.json["error_description"]?.stringValue?.isEmpty == false, "\(method) \(path)")
                    #expect(response.json["code"] == nil, "\(method) \(path): not the envelope")
                    #expect(response.header("Cache-Control") == "no-store", "\(method) \(path)")
                    let challenge = response.header("WWW-Authenticate")
                    if endpoint == "userinfo" {
                        #expect(challenge == #"Bearer error="invalid_request""#, "\(method) \(path)")
                    } else {
                        #expect(challenge == nil, "\(method) \(path)")
                    }
                }
            }
        }
    }

    @Test("elsewhere, and for near-miss OAuth paths, an unreadable path answers the envelope's bad_request")
    func otherRoutesAnswerEnvelope() async throws {
        try await RunningHerald.with { herald in
            let paths = ["/api/oauth/%FF/jwks.json", "/api/oauth/%FF/.well-known/openid-configuration",
                         "/api/oauth/%FF/apple/native-login", "/api/auth/%FF/me", "/api/admin/realms/%FF",
                         "/api/oauth/acme/tok%FFen", "/api/oauth/%FF/token/extra", "/api/oauth/%FF/%FF/token",
                         "/api/v2/oauth/%FF/token"]
            for path in paths {
                let response = try await herald.send("GET", path, headers: [("X-Request-Id", "shape-1")])
                #expect(response.status == 400, "\(path)")
                #expect(response.json["code"]?.stringValue == "bad_request", "\(path)")
                #expect(response.json["requestId"]?.stringValue == "shape-1", "\(path)")
                #expect(response.json["error"] == nil, "\(path)")
            }
        }
    }

    @Test("the raw-path matcher accepts exactly /api/oauth/{any}/{protocol endpoint}")
    func matcher() {
        for endpoint in ["authorize", "token", "revoke", "introspect", "userinfo"] {
            #expect(OAuthMalformedRequest.isOAuthEndpoint("/api/oauth/%FF/\(endpoint)"))
        }
        for path in ["/api/oauth/%FF/jwks.json", "/api/oauth/token", "/api/oauth//token/", "api/oauth/x/token",
                     "/api/oauth/x/token/", "/api/auth/x/token", "/api/oauth/x/y/token", "/"] {
            #expect(!OAuthMalformedRequest.isOAuthEndpoint(path), "\(path)")
        }
    }
}

@Suite("Admin signing keys: the SigningKey schema's nullable fields are sent")
struct SigningKeyWireShapeTests {
    @Test("list and rotate send retiredAt and publishUntil, null for the active key and numbers for a retired one")
    func nullableFieldsArePresent() async throws {
        try await RunningHerald.with { herald in
            try await herald.createRealm("acme")
            let rotated = try await herald.admin("POST", "/api/admin/realms/acme/keys/rotate")
            #expect(rotated.status == 201)
            // `== .null` (present and null), not `== nil` (absent), is what the schema requires.
            #expect(rotated.json["retiredAt"] == .null)
            #expect(rotated.json["publishUntil"] == .null)
            #expect(rotated.json["status"] == "active")

            let listed = try await herald.admin("GET", "/api/admin/realms/acme/keys")
            #expect(listed.status == 200)
            let items = listed.json["items"]?.arrayValue ?? []
            #expect(items.count == 2)
            let active = items.first { $0["status"] == "active" }
            let retired = items.first { $0["status"] == "retired" }
            #expect(active?["kid"] == rotated.json["kid"])
            #expect(active?["retiredAt"] == .null)
            #expect(active?["publishUntil"] == .null)
            #expect(retired?["retiredAt"]?.int64Value != nil)
            #expect((retired?["publishUntil"]?.int64Value ?? 0) > (retired?["retiredAt"]?.int64Value ?? .max))
            for item in items {
                #expect(Set(item.objectValue?.keys.map { $0 } ?? [])
                    == ["kid", "algorithm", "status", "createdAt", "retiredAt", "publishUntil"])
            }
        }
    }
}
