import Foundation
import HeraldApple
import Realms

/// Apple refusing a code exchange is the operator's to fix (`invalid_client`: the Team ID, Key
/// ID or key is wrong) or at least to see, in both doors: each refusal becomes a security event
/// `apple.code_exchange_refused` whose reason is Apple's error, never its body.
struct AppleExchangeRefusals: Sendable {
    let events: SecurityEventLog
    let logger: Logger
    let now: @Sendable () -> Date

    /// Records `failure` when it is a refusal; a failure to record is logged, not thrown (the
    /// sign-in's answer does not depend on it).
    func record(_ failure: AppleAPIFailure, realmID: String, clientID: String?) async {
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
