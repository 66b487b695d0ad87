import Foundation

/// `exp` is in the future, allowing `leeway` for clock skew.
struct ExpiryCheck {
    let now: Date
    let leeway: TimeInterval

    func evaluate(expiresAt: Double) -> AppleCheckOutcome {
        let current = now.timeIntervalSince1970
        if current < expiresAt + leeway {
            return .passed(detail: "exp \(LifetimeText.describe(expiresAt)) is \(LifetimeText.seconds(expiresAt - current)) s after now (leeway \(Int(leeway)) s)")
        }
        return .failed(.expired, detail: "exp \(LifetimeText.describe(expiresAt)) is \(LifetimeText.seconds(current - expiresAt)) s before now (leeway \(Int(leeway)) s)")
    }
}

/// `iat` (and `nbf`, when present) are not in the future, allowing `leeway` for clock skew.
struct IssuedAtCheck {
    let now: Date
    let leeway: TimeInterval

    func evaluate(issuedAt: Double, notBefore: Double?) -> AppleCheckOutcome {
        let current = now.timeIntervalSince1970
        if issuedAt > current + leeway {
            return .failed(.notYetValid, detail: "iat \(LifetimeText.describe(issuedAt)) is \(LifetimeText.seconds(issuedAt - current)) s after now (leeway \(Int(leeway)) s)")
        }
        if let notBefore, notBefore > current + leeway {
            return .failed(.notYetValid, detail: "nbf \(LifetimeText.describe(notBefore)) is \(LifetimeText.seconds(notBefore - current)) s after now (leeway \(Int(leeway)) s)")
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
