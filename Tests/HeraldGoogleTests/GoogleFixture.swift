import Foundation
@testable import HeraldGoogle
import HeraldTestSupport
import JOSE
import ProviderKeys
import Storage

/// Keys are expensive to generate; every test signs with the same fake Google keys.
let googleKeys: FakeGoogleKeys = try! FakeGoogleKeys()

/// The policy of a realm accepting the minter's client id and requiring a nonce.
func googlePolicy(clientIDs: Set<String> = [GoogleTokenMinter.defaultClientID, "web.apps.googleusercontent.com"],
                  hostedDomain: String? = nil, nonceRequired: Bool = true,
                  rawNonce: String? = GoogleTokenMinter.defaultNonce, realmID: String = "acme") -> GoogleVerificationPolicy {
    GoogleVerificationPolicy(requirements: GoogleRealmRequirements(clientIDs: clientIDs, hostedDomain: hostedDomain),
                             nonceRequired: nonceRequired, rawNonce: rawNonce, realmID: realmID)
}

/// A verifier over a fixed key set or a live cache, at an instant the test controls.
struct FakeGoogle {
    let clock = TestClock()
    var keys: any SigningKeySource = StaticKeySet(keySet: try! JWKSet.parse(googleKeys.document))
    var minter: GoogleTokenMinter { GoogleTokenMinter(keys: googleKeys, now: clock.now) }

    func verifier(replayStore: GoogleReplayStore? = nil) -> GoogleIdentityVerifier {
        GoogleIdentityVerifier(jwks: keys, replayStore: replayStore, requirements: { _, _ in nil }, now: clock.closure)
    }

    func result(_ token: String, policy: GoogleVerificationPolicy = googlePolicy()) async -> GoogleVerificationResult {
        await verifier().verify(token: token, policy: policy).result
    }
}

extension GoogleVerificationResult {
    var claims: GoogleIdentityClaims? {
        if case .verified(let claims) = self { return claims }
        return nil
    }
}
