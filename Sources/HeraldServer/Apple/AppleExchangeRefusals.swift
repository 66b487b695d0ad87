import Foundation
import HeraldApple
import Realms

/// Apple refusing a code exchange is the operator's to fix (`invalid_client`: the Team ID, Key
/// ID or key is wrong) or at least to see, in both doors: each refusal becomes a security event
/// `apple.code_exchange_refused` whose reason is Apple's error, never its body. Every exchange's
/// outcome, success or failure, is also noted for the realm overview (`AppleExchangeOutcomes`),
/// and a refused or accepted client secret sets or clears its warning gauge at once.
struct AppleExchangeRefusals: Sendable {
    let events: SecurityEventLog
    let outcomes: AppleExchangeOutcomes
    let warnings: AppleHealthWarnings
    let logger: Logger
    let now: @Sendable () -> Date

    /// Notes an exchange Apple answered with tokens.
    func recordSuccess(realmID: String) {
        outcomes.record(realmID: realmID, failure: nil, at: now().unixSeconds)
        warnings.set(.clientSecretRejected, active: false, realmID: realmID)
    }

    /// Notes `failure`, and records it as a security event when it is a refusal; a failure to
    /// record is logged, not thrown (the sign-in's answer does not depend on it).
    func record(_ failure: AppleAPIFailure, realmID: String, clientID: String?) async {
        outcomes.record(realmID: realmID, failure: failure, at: now().unixSeconds)
        if failure == .invalidClient { warnings.set(.clientSecretRejected, active: true, realmID: realmID) }
        guard failure.isRefusal else { return }
        do {
            try await events.record(NewSecurityEvent(
                realmID: realmID, type: .appleCodeExchangeRefused, at: now().unixSeconds, reason: failure.rawValue,
                clientID: clientID, actor: "apple"))
        } catch {
            logger.warning("security_event_not_recorded", [
                "realm": .string(realmID), "type": .string(SecurityEventType.appleCodeExchangeRefused.rawValue),
                "errorType": .string(String(describing: type(of: error))),
            ])
        }
    }
}
