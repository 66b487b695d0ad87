import Foundation
import HeraldApple
import Synchronization

/// Calls to Apple that a request starts but does not wait for: keeping a native login's Apple
/// refresh token, and revoking a deleted account's. Neither decides the answer (a failed
/// exchange does not fail the login; a failed revocation does not undo the delete), so they
/// run after the response and are counted and logged — without tokens or codes.
enum AppleTokenTasks {
    /// At most this many exchanges wait on Apple at once (each may take its 10 s timeout):
    /// a burst of logins while Apple is slow must not pile up tasks and connections. Over it an
    /// exchange is skipped (`busy`): the account keeps the refresh token it had, if any.
    static let maximumExchangesInFlight = 32
    private static let exchangesInFlight = Atomic<Int>(0)

    /// Exchanges `code` (issued to `clientID`, the identity token's audience) in the background.
    static func keepRefreshToken(code: String, realmID: String, accountID: String, clientID: String,
                                 context: HeraldContext) {
        let admitted = exchangesInFlight.wrappingAdd(1, ordering: .relaxed).newValue <= maximumExchangesInFlight
        guard admitted else {
            exchangesInFlight.wrappingSubtract(1, ordering: .relaxed)
            context.metrics.recordAppleCall(operation: "token_exchange", outcome: "busy")
            return
        }
        Task {
            defer { exchangesInFlight.wrappingSubtract(1, ordering: .relaxed) }
            let outcome = await context.appleTokens.keepRefreshToken(fromCode: code, realmID: realmID,
                                                                      accountID: accountID, clientID: clientID)
            let label = switch outcome {
            case .success: "success"
            case .failure(let failure): failure.rawValue
            }
            context.metrics.recordAppleCall(operation: "token_exchange", outcome: label)
            if case .failure = outcome {
                context.logger.warning("apple_token_exchange_failed", ["realm": .string(realmID), "reason": .string(label)])
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
