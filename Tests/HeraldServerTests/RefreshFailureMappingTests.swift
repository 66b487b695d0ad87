import Grants
import Testing
import TokenIssuer
@testable import HeraldServer

/// A refused refresh tells the client whether to drop its token: only a token at fault may
/// say so; a database that is down must say "retry later".
@Suite struct RefreshFailureMappingTests {
    @Test func tokenEndpointAnswersOutagesWithTemporarilyUnavailableAndOwnFailuresWithServerError() {
        let unavailable = OAuthErrorResponse.json(GrantsError(refreshFailure: TokenError(.storageUnavailable)), realmID: "acme")
        #expect(unavailable.status == 503)
        #expect(unavailable.headers["Retry-After"] == String(APIError.storageRetryAfterSeconds))
        #expect(GrantsError(refreshFailure: TokenError(.storageUnavailable)).oauthError == "temporarily_unavailable")

        let failure = GrantsError(refreshFailure: TokenError(.storageFailure))
        #expect(failure.oauthError == "server_error")
        #expect(OAuthErrorResponse.json(failure, realmID: "acme").status == 500)

        for code: TokenError.Code in [.invalidGrant, .expired, .revoked, .reuseDetected, .clientMismatch] {
            #expect(GrantsError(refreshFailure: TokenError(code)).oauthError == "invalid_grant", "\(code)")
        }
    }

    @Test func sessionAPIAnswersOutagesWith503ServiceUnavailable() {
        let error = APIError(refreshFailure: TokenError(.storageUnavailable))
        #expect(error.status == 503)
        #expect(error.code == "service_unavailable")
        #expect(APIError(refreshFailure: TokenError(.storageFailure)).status == 500)
    }
}
