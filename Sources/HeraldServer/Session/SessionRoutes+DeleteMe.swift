import HTTPServer
import HeraldApple
import JOSE
import Realms
import TokenIssuer

/// `DELETE /api/auth/:realm/me`: the account's owner deletes it from inside the app (App Store
/// guideline 5.1.1(v)), the way the admin delete does (`AccountDeletions`), and learns whether
/// the revocation of its Apple tokens was queued.
///
/// - Who: a first-party session's access token, or another client's whose scope (capped by
///   what the client may still be granted) holds `account:delete`; any other answers 403
///   `insufficient_scope`.
/// - Recent sign-in: the session's sign-in (`auth_time`, which refreshes keep) must be at most
///   ``deletionSignInMaxAgeSeconds`` old, else 401 `reauthentication_required`: the app runs
///   Sign in with Apple again right before deleting, which also hands Herald a fresh
///   `authorizationCode` whose token can then be revoked.
/// - Idempotent: once the account is deleted its sessions are revoked, but an access token of
///   one of them that has not expired still answers the same 200, with what the deletion
///   recorded for the Apple tokens (the deletion event's `reason`; `not_stored` when none was
///   recorded). No recent sign-in is asked then: there is no account left to sign in to.
extension SessionRoutes {
    /// The longest time since the session's sign-in that `DELETE /me` accepts.
    static let deletionSignInMaxAgeSeconds: Int64 = 600

    static func deleteMe(_ request: HTTPRequest, context: SessionRoutes) async throws -> HTTPResponse {
        let realm = try await enabledRealm(request, context: context)
        guard let token = BearerAuthorization.token(in: request) else {
            throw APIError.unauthorized
        }
        let validation = try await context.accessTokens.validate(token, realmID: realm.id, requiring: .accountDeletion)
        let claims: AccessTokenClaims
        switch validation {
        case .valid(let valid):
            guard let authTime = valid.authTime, context.now().unixSeconds - authTime <= deletionSignInMaxAgeSeconds else {
                throw APIError.reauthenticationRequired
            }
            claims = valid
        case .accountDeleted(let deleted):
            // A retry whose first answer was lost, or a delete that raced this one: answered below
            // with what that deletion recorded.
            claims = deleted
        case .clientNotAllowed:
            throw APIError.accountDeletionScopeMissing
        default:
            throw try await refusal(validation, token: token, realmID: realm.id, context: context)
        }
        let deletion = try await context.accountDeletions.delete(
            realmID: realm.id, accountID: claims.sub,
            by: .owner(sessionID: claims.sessionID, clientID: claims.clientID,
                       clientIP: context.clientAddresses.clientAddress(of: request)))
        let outcome = deletion.followUp.flatMap(AppleTokenVault.RevocationOutcome.init(rawValue:)) ?? .notStored
        if deletion.deletedNow {
            context.logger.info("account_deleted_by_user", [
                "realm": .string(realm.id), "clientId": .string(claims.clientID),
                "appleTokenRevocation": .string(outcome.rawValue), "requestId": .string(request.requestID),
            ])
        }
        return .json(["deleted": true, "appleTokenRevocation": .string(outcome.rawValue)], noStore: true)
    }
}

extension APIError {
    /// The session's sign-in is older than `DELETE /me` accepts: sign in again, then retry
    /// (RFC 9470's challenge names the accepted age).
    static let reauthenticationRequired = APIError(
        status: 401, code: "reauthentication_required",
        message: "Sign in again right before deleting the account",
        details: ["maxAgeSeconds": .number(Double(SessionRoutes.deletionSignInMaxAgeSeconds))],
        headers: [("WWW-Authenticate",
                   #"Bearer error="insufficient_user_authentication", max_age=\#(SessionRoutes.deletionSignInMaxAgeSeconds)"#)])
    /// A confidential or third-party client's token without the `account:delete` scope at `DELETE /me`.
    static let accountDeletionScopeMissing = APIError(
        status: 403, code: "insufficient_scope",
        message: "Deleting the account needs a first-party session or the account:delete scope",
        details: ["scope": .string(AccessRequirement.accountDeletionScope)],
        headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="\#(AccessRequirement.accountDeletionScope)""#)])
}
