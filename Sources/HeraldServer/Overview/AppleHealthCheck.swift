import Foundation

/// Turns a realm's Apple health into warnings in plain words, each naming what to check. A pure
/// function of what was read and the time, so each rule is tested on its own.
enum AppleHealthCheck {
    /// Days without a notification, while Apple tokens are stored, before it is worth a look.
    static let silenceDays: Int64 = 30
    /// How long an `invalid_client` refusal stays a warning without a later success seen.
    static let refusalWarningSeconds: Int64 = 7 * 86_400

    /// The warnings `health` calls for at `now`; `oldestRefreshTokenAt` is when the realm's
    /// first stored Apple token came (the silence is counted from it when no notification came).
    static func warnings(_ health: AppleHealth, oldestRefreshTokenAt: Int64?, now: Int64) -> [RealmOverview.Warning] {
        guard health.configured, health.enabled else { return [] }
        var warnings: [RealmOverview.Warning] = []
        if let rejected = secretRejection(health.webFlow, now: now) {
            warnings.append(.init(kind: .clientSecretRejected, message: """
                Apple rejected the client secret at \(time(rejected)) (invalid_client): check the Key ID, the Team ID \
                and the private key of the Apple provider.
                """, at: rejected))
        }
        let keys = health.keys
        if keys.stale, let failure = keys.lastFailure {
            warnings.append(.init(kind: .staleKeys, message: """
                Apple's signing keys are stale: refreshing them failed at \(time(failure.at)) (\(failure.outcome)). \
                Tokens are still checked with the keys fetched at \(keys.lastSuccessAt.map(time) ?? "an earlier time"), \
                for up to 7 days past their expiry; check that Herald can reach Apple's key URL.
                """, at: failure.at))
        } else if keys.lastSuccessAt == nil, let failure = keys.lastFailure {
            warnings.append(.init(kind: .keysUnavailable, message: """
                Apple's signing keys could not be fetched (\(failure.outcome) at \(time(failure.at))): every sign-in \
                with Apple fails until they are; check that Herald can reach Apple's key URL.
                """, at: failure.at))
        }
        if health.tokens.refreshTokens > 0 {
            let quietSince = health.notifications.last?.receivedAt ?? oldestRefreshTokenAt ?? now
            if now - quietSince >= silenceDays * 86_400 {
                let days = (now - quietSince) / 86_400
                warnings.append(.init(kind: .notificationsSilent, message: """
                    No server-to-server notification from Apple in \(days) days while \(health.tokens.refreshTokens) \
                    Apple refresh tokens are stored: check the notification endpoint registered for the app at Apple.
                    """, at: health.notifications.last?.receivedAt))
            }
        }
        if health.tokens.failedRevocations > 0 {
            warnings.append(.init(kind: .revocationsFailed, message: """
                \(health.tokens.failedRevocations) revocations of Apple tokens were given up after repeated failures: \
                Apple still holds those grants; check the Key ID, the Team ID and the private key.
                """, at: nil))
        }
        let web = health.webFlow
        if web.returnUrls > 0, !(web.teamIdSet && web.keyIdSet && web.privateKeyStored) {
            let missing = [(web.teamIdSet, "Team ID"), (web.keyIdSet, "Key ID"), (web.privateKeyStored, "private key")]
                .filter { !$0.0 }.map(\.1)
            warnings.append(.init(kind: .webFlowIncomplete, message: """
                Return URLs are set for Sign in with Apple on the web, but the \(missing.joined(separator: ", ")) \
                \(missing.count == 1 ? "is" : "are") missing: Herald cannot sign the client secret Apple's token endpoint asks for.
                """, at: nil))
        }
        return warnings
    }

    /// When Apple last refused the client secret, if no exchange has succeeded since and it is
    /// recent enough to matter.
    static func secretRejection(_ web: AppleHealth.WebFlow, now: Int64) -> Int64? {
        if let last = web.lastExchange {
            // This node saw the latest exchange: it says whether the secret works now.
            if last.ok || last.error != "invalid_client" {
                if let refusal = web.lastRefusal, refusal.error == "invalid_client", refusal.at > last.at,
                   now - refusal.at < refusalWarningSeconds {
                    return refusal.at  // another node's later refusal
                }
                return nil
            }
            return last.at
        }
        guard let refusal = web.lastRefusal, refusal.error == "invalid_client", now - refusal.at < refusalWarningSeconds
        else { return nil }
        return refusal.at
    }

    /// A moment as the operator reads it: `2026-12-06 12:03 UTC`.
    static func time(_ unix: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unix))) + " UTC"
    }
}
