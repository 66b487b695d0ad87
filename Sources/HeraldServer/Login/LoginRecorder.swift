import HTTPServer
import Login
import Realms

/// One log line and one metric per login attempt, the same for every door into the login
/// pipeline (the native app's post, the web callback, Google's): what counts as an outage and
/// whether the client id may be logged is `LoginError`'s to say, not the door's. Never records
/// the token, nonce or email.
///
/// The attempt's fields are left on its request (`LoginAttemptLine`), so its access-log line is
/// the login's line: one line per login, not a login line and a request line.
struct LoginRecorder: Sendable {
    /// The way the attempt came in: a log field and a label of `herald_logins_total`.
    enum Door: String, Sendable {
        /// An app posted the provider's identity token (`…/native-login`).
        case native
        /// The browser came back from the provider's sign-in page (`…/web/callback`).
        case web
    }

    let door: Door
    /// The provider's name (`IdentityTokenLogin.provider`).
    let provider: String
    let metrics: HeraldMetrics
    /// The realm overview's hourly buckets (memory only; shared in the background). Nil where
    /// nothing reads them (tests of the log line alone).
    let counts: LoginCounts?
    let logger: Logger

    /// Records one attempt that came in as `request`. The client id is logged only when the
    /// pipeline found that client (a caller can type anything into that field).
    func record(_ outcome: Result<LoginResult, LoginError>, realmID: String, clientID: String, request: HTTPRequest) {
        let outcomeLabel: String
        let reason: String
        let accountID: String
        let clientKnown: Bool
        switch outcome {
        case .success(let result):
            outcomeLabel = "success"
            reason = result.isNewUser ? "created" : "existing"
            accountID = result.accountID
            clientKnown = true
        case .failure(let error):
            outcomeLabel = error.isOutage ? "error" : "rejected"
            reason = error.reason
            accountID = error.accountID ?? ""
            clientKnown = error.clientResolved
        }
        metrics.recordLogin(provider: provider, door: door.rawValue, outcome: outcomeLabel, reason: reason)
        // Only attempts the pipeline tied to a stored realm: made-up realm ids must not fill the buckets.
        if let counts, outcome.realmFound {
            counts.record(realmID: realmID, provider: provider, door: door.rawValue, outcome: outcomeLabel, reason: reason)
        }
        request.leaveAccessLogNote(LoginAttemptLine(realm: InputRules.isSlug(realmID) ? realmID : "invalid",
                                                    provider: provider, door: door.rawValue,
                                                    client: clientKnown ? clientID : "unknown", outcome: outcomeLabel,
                                                    reason: reason, accountID: accountID))
        // An outage of ours says why (the database's SQLSTATE and message), as storage_unavailable does.
        if case .failure(let error) = outcome, let cause = error.cause {
            logger.warning("login_outage", ["reason": .string(reason), "cause": .string(cause),
                                            "requestId": .string(request.requestID)])
        }
    }
}

private extension Result<LoginResult, LoginError> {
    /// Whether the attempt got past loading the realm, so its realm id names a stored realm:
    /// every success did, and the refusals decided on the realm's settings. The others may come
    /// before that lookup (an unreadable request, an oversized token, our failures) and carry
    /// whatever realm id the caller typed.
    var realmFound: Bool {
        guard case .failure(let error) = self else { return true }
        switch error.code {
        case .badRequest, .realmNotFound, .tokenTooLarge, .internalFailure, .serviceUnavailable: return false
        case .providerNotConfigured, .unknownClient, .clientNotAllowed, .invalidIdentityToken, .providerUnavailable,
             .registrationDisabled, .accountDisabled, .invalidDownstreamState, .rateLimited: return true
        }
    }
}
