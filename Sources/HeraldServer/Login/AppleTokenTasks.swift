import Foundation
import HeraldApple

/// Calls to Apple that a request starts but does not wait for: keeping a native login's Apple
/// refresh token, and revoking a deleted account's. Neither decides the answer (a failed
/// exchange does not fail the login; a failed revocation does not undo the delete), so they
/// run after the response and are counted and logged — without tokens or codes.
enum AppleTokenTasks {
    /// Exchanges `code` (issued to `clientID`, the identity token's audience) in the background.
    /// Over `AppleAPIClient.maximumExchangesInFlight` it fails at once as `busy`: the account
    /// keeps the refresh token it had, if any.
    static func keepRefreshToken(code: String, realmID: String, accountID: String, clientID: String,
                                 context: HeraldContext) {
        Task {
            let outcome = await context.appleTokens.keepRefreshToken(fromCode: code, realmID: realmID,
                                                                      accountID: accountID, clientID: clientID)
            let label = switch outcome {
            case .success: "success"
            case .failure(let failure): failure.rawValue
            }
            context.metrics.recordAppleCall(operation: "token_exchange", outcome: label)
            if case .failure(let failure) = outcome {
                context.logger.warning("apple_token_exchange_failed", ["realm": .string(realmID), "reason": .string(label)])
                await AppleExchangeRefusals.record(failure, realmID: realmID, clientID: clientID, context: context)
            }
        }
    }

    /// Runs the revocations that are due (after a delete, and each maintenance round).
    static func revokeDue(context: HeraldContext) async {
        do {
            let round = try await context.appleTokens.revokeDue()
            for (outcome, count) in [("success", round.revoked), ("failure", round.failed - round.abandoned),
                                     ("abandoned", round.abandoned)] {
                for _ in 0..<count { context.metrics.recordAppleCall(operation: "revoke", outcome: outcome) }
            }
            if round.failed > 0 {
                context.logger.warning("apple_revocation_failed", ["count": .int(round.failed), "abandoned": .int(round.abandoned)])
            }
        } catch {
            context.logger.warning("apple_revocation_round_failed", ["errorType": .string(String(describing: type(of: error)))])
        }
    }
}
