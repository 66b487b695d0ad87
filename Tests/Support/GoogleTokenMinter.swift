import Foundation
import JOSE

/// Google's signing keys as a test sees them: two RSA keys (the second published after a
/// rotation) and an EC key Google never uses (for the algorithm check).
public final class FakeGoogleKeys: Sendable {
    public let rsa: PrivateKey
    public let rotated: PrivateKey
    public let ec: PrivateKey
    public let rsaKeyID = "google-rsa-1"
    public let rotatedKeyID = "google-rsa-2"
    public let ecKeyID = "google-ec-1"

    /// Generates fresh keys.
    public init() throws {
        rsa = try PrivateKey.generate(for: .rs256)
        rotated = try PrivateKey.generate(for: .rs256)
        ec = try PrivateKey.generate(for: .es256)
    }

    /// The JWKS before rotation (served by a ``FakeJWKSServer`` standing in for Google's certs).
    public var document: [UInt8] {
        JWKSet.document([rsa.publicKey.jwk(keyID: rsaKeyID), ec.publicKey.jwk(keyID: ecKeyID)])
    }

    /// The JWKS after rotation.
    public var rotatedDocument: [UInt8] {
        JWKSet.document([rsa.publicKey.jwk(keyID: rsaKeyID), ec.publicKey.jwk(keyID: ecKeyID),
                         rotated.publicKey.jwk(keyID: rotatedKeyID)])
    }
}

/// Mints Google-shaped ID tokens (RS256) signed by ``FakeGoogleKeys``; serialization is
/// ``AppleTokenMinter/serialize(_:)``'s, which builds any JWS by hand.
public struct GoogleTokenMinter: Sendable {
    public static let defaultClientID = "1234567890-abc.apps.googleusercontent.com"
    public static let defaultSubject = "110169484474386276334"
    public static let defaultNonce = "google-nonce-5e2a"
    public static let defaultHostedDomain = "example.com"

    public let keys: FakeGoogleKeys
    public let now: Date

    /// A minter whose tokens are issued at `now`, valid an hour (as Google's are).
    public init(keys: FakeGoogleKeys, now: Date) {
        self.keys = keys
        self.now = now
    }

    /// A valid token's ingredients: Google's issuer, the default client id as `aud` and `azp`,
    /// the nonce verbatim, a verified email in the default hosted domain, a name and picture.
    public func validSpec() -> AppleTokenSpec {
        let issued = now.timeIntervalSince1970.rounded(.down)
        return AppleTokenSpec(
            alg: "RS256", kid: keys.rsaKeyID, signingKey: keys.rsa, signingAlgorithm: nil,
            claims: [
                "iss": .string("https://accounts.google.com"),
                "aud": .string(Self.defaultClientID),
                "azp": .string(Self.defaultClientID),
                "sub": .string(Self.defaultSubject),
                "email": .string("ada@example.com"),
                "email_verified": .bool(true),
                "hd": .string(Self.defaultHostedDomain),
                "nonce": .string(Self.defaultNonce),
                "iat": .number(issued),
                "exp": .number(issued + 3600),
                "name": .string("Ada Lovelace"),
                "given_name": .string("Ada"),
                "family_name": .string("Lovelace"),
                "picture": .string("https://lh3.googleusercontent.com/a/photo"),
            ])
    }

    /// A valid token, changed by `customize`.
    public func token(_ customize: (inout AppleTokenSpec) -> Void = { _ in }) -> String {
        var spec = validSpec()
        customize(&spec)
        return AppleTokenMinter.serialize(spec)
    }
}
