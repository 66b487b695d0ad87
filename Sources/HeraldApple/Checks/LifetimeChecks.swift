import Foundation

/// `exp` is in the future, and `iat` no older than Apple's tokens get, each allowing `leeway`
/// for clock skew.
struct ExpiryCheck {
    /// The oldest `iat` accepted, before leeway (issue #20): Apple mints the token when the
    /// user signs in and the app sends it at once, so an hour-old one is a stored or stolen
    /// token whatever its `exp` says. Rejected as `expired`: it is too old to use.
    static let maximumAgeSeconds: Double = 3_600

    let now: Date
    let leeway: TimeInterval

    func evaluate(expiresAt: Double, issuedAt: Double) -> AppleCheckOutcome {
        let current = now.timeIntervalSince1970
        guard current < expiresAt + leeway else {
            return .failed(.expired, detail: "exp \(LifetimeText.describe(expiresAt)) is \(LifetimeText.seconds(current - expiresAt)) s before now (leeway \(LifetimeText.seconds(leeway)) s)")
        }
        if current - issuedAt > Self.maximumAgeSeconds + leeway {
            return .failed(.expired, detail: "iat \(LifetimeText.describe(issuedAt)) is \(LifetimeText.seconds(current - issuedAt)) s before now, older than the \(LifetimeText.seconds(Self.maximumAgeSeconds)) s accepted (leeway \(LifetimeText.seconds(leeway)) s)")
        }
        return .passed(detail: "exp \(LifetimeText.describe(expiresAt)) is \(LifetimeText.seconds(expiresAt - current)) s after now (leeway \(LifetimeText.seconds(leeway)) s)")
    }
}

/// `iat` (and `nbf`, when present) are not in the future, allowing `leeway` for clock skew.
struct IssuedAtCheck {
    let now: Date
    let leeway: TimeInterval

    func evaluate(issuedAt: Double, notBefore: Double?) -> AppleCheckOutcome {
        let current = now.timeIntervalSince1970
        if issuedAt > current + leeway {
            return .failed(.notYetValid, detail: "iat \(LifetimeText.describe(issuedAt)) is \(LifetimeText.seconds(issuedAt - current)) s after now (leeway \(LifetimeText.seconds(leeway)) s)")
        }
        if let notBefore, notBefore > current + leeway {
            return .failed(.notYetValid, detail: "nbf \(LifetimeText.describe(notBefore)) is \(LifetimeText.seconds(notBefore - current)) s after now (leeway \(LifetimeText.seconds(leeway)) s)")
        }
        return .passed(detail: "iat \(LifetimeText.describe(issuedAt)) is not in the future")
    }
}

/// Formats claim times for check details. Total for every Double: decoding already bounds
/// claim times, and a detail line must never be the thing that traps.
enum LifetimeText {
    static func describe(_ seconds: Double) -> String {
        let date = Date(timeIntervalSince1970: seconds)
        return "\(self.seconds(seconds.rounded(.down))) (\(date.formatted(.iso8601)))"
    }

    static func seconds(_ interval: Double) -> String {
        Int64(exactly: interval.rounded(.towardZero)).map(String.init) ?? String(interval)
    }
}
