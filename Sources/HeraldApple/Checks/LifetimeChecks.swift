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
        return .passed(detail: AppleCheckDetail {
            "exp \(LifetimeText.describe(expiresAt)) is \(LifetimeText.seconds(expiresAt - current)) s after now (leeway \(LifetimeText.seconds(leeway)) s)"
        })
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
        return .passed(detail: AppleCheckDetail { "iat \(LifetimeText.describe(issuedAt)) is not in the future" })
    }
}

/// Formats claim times for check details. Total for every Double: decoding already bounds
/// claim times, and a detail line must never be the thing that traps.
enum LifetimeText {
    static func describe(_ seconds: Double) -> String {
        "\(self.seconds(seconds.rounded(.down))) (\(utc(seconds)))"
    }

    /// `2026-12-06T07:04:43Z`, as `Date.formatted(.iso8601)` writes it. Written out by hand
    /// because a refused login's checks describe their times (issue #39: Foundation's format
    /// style cost about 2.5 µs a time; a passing check words its detail only when read); days
    /// to a civil date by Howard Hinnant's algorithm.
    static func utc(_ seconds: Double) -> String {
        // Gregorian dates only (from 1582-10-15, where Foundation's calendar leaves the Julian
        // one) up to year 9999; an earlier time, refused anyway, goes to Foundation.
        guard seconds.isFinite, seconds >= -12_219_292_800, seconds < 253_402_300_800 else {
            return Date(timeIntervalSince1970: seconds).formatted(.iso8601)
        }
        let whole = Int64(seconds.rounded(.down))
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let secondOfDay = whole - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func padded(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + "T" + padded(secondOfDay / 3_600, 2)
            + ":" + padded(secondOfDay % 3_600 / 60, 2) + ":" + padded(secondOfDay % 60, 2) + "Z"
    }

    static func seconds(_ interval: Double) -> String {
        Int64(exactly: interval.rounded(.towardZero)).map(String.init) ?? String(interval)
    }
}
