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

        for code: TokenError.Code in [.invalidGrant, .expired, .idleExpired, .revoked, .reuseDetected, .clientMismatch] {
            #expect(GrantsError(refreshFailure: TokenError(code)).oauthError == "invalid_grant", "\(code)")
        }
    }

    /// Issue #16: the app signs in again either way, but "ended by time" and "ended by someone"
    /// are different messages to the person (and reuse is a security signal).
    @Test func sessionAPITellsExpiredFromRevokedSessions() {
        #expect(APIError(refreshFailure: TokenError(.expired)) == .refreshTokenExpired(reason: "lifetime"))
        #expect(APIError(refreshFailure: TokenError(.idleExpired)) == .refreshTokenExpired(reason: "idle"))
        #expect(APIError(refreshFailure: TokenError(.idleExpired)).code == "refresh_token_expired")
        for code: TokenError.Code in [.revoked, .reuseDetected] {
            let error = APIError(refreshFailure: TokenError(code))
            #expect(error.status == 401, "\(code)")
            #expect(error.code == "refresh_token_revoked", "\(code)")
        }
    }

    @Test func sessionAPIAnswersOutagesWith503ServiceUnavailable() {
        let error = APIError(refreshFailure: TokenError(.storageUnavailable))
        #expect(error.status == 503)
        #expect(error.code == "service_unavailable")
        #expect(APIError(refreshFailure: TokenError(.storageFailure)).status == 500)
    }
}
