import Foundation
import HeraldTestSupport
import Storage
import Testing
@testable import HeraldServer

/// The overview's cost is bounded by the window, not the realm's history: with
/// `HERALD_MEASURE=1` it is measured with a million security events, a million sign-ins (as the
/// hourly rows they become) and a hundred thousand Apple notifications in the realm, and held to
/// the 50 ms target; the figure is printed. In the ordinary suite (parallel, on shared cores, where
/// a timing says more about the neighbours) it runs the same checks over 20,000 events.
@Suite("Realm overview at scale", .serialized)
struct RealmOverviewScaleTests {
    static let measuring = ProcessInfo.processInfo.environment["HERALD_MEASURE"] == "1"
    static let events = measuring ? 1_000_000 : 20_000
    /// Hours × providers × doors × reasons: 168 × 2 × 2 × 15 rows of 100 sign-ins each.
    static let reasons = ["created", "existing", "audience", "nonce", "expired", "signature", "replayed", "rate_limited",
                          "apple_unavailable", "issuer", "unknown_client", "client_not_allowed", "account_disabled",
                          "registration_disabled", "token_too_large"]

    @Test("the overview answers in well under the bound with a million events and sign-ins", arguments: Backend.allCases)
    func boundedAtAMillion(backend: Backend) async throws {
        // The server's clock stands still inside the current hour: the rows are seeded by hour
        // from it, and a real clock crossing an hour between seeding and asking moves the 24-hour
        // window by one of them (CI saw 23 hours, 138,000 attempts, at 21:00).
        let clock = NativeLoginFixture.clockInsideOneWindow(of: 3600)
        try await NativeLoginFixture.with(backend: backend, clock: clock) { fixture in
            let database = fixture.herald.application.services.database
            let now = Int64(clock.now.timeIntervalSince1970)
            let hour = now - now % 3600
            let reasonValues = Self.reasons.map { "('\($0)')" }.joined(separator: ", ")
            try await database.write { db in
                try db.execute("""
                    WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
                    INSERT INTO security_events (realm_id, at, type, reason, client_id, actor)
                    SELECT 'acme', ? - (n % 2592000), CASE WHEN n % 1000 = 0 THEN 'apple.code_exchange_refused' ELSE 'login.failed' END,
                           CASE WHEN n % 1000 = 0 THEN 'invalid_grant' ELSE 'audience' END, 'ios-app', 'apple'
                    FROM seq
                    """, .integer(Int64(Self.events)), .integer(now))
                try db.execute("""
                    WITH RECURSIVE hours(h) AS (SELECT 0 UNION ALL SELECT h + 1 FROM hours WHERE h < 167),
                    providers(p) AS (VALUES ('apple'), ('google')),
                    doors(d) AS (VALUES ('native'), ('web')),
                    reasons(r) AS (VALUES \(reasonValues))
                    INSERT INTO login_counts (realm_id, hour_start, provider, door, outcome, reason, count)
                    SELECT 'acme', ? - h * 3600, p, d,
                           CASE WHEN r IN ('created', 'existing') THEN 'success' WHEN r = 'apple_unavailable' THEN 'error' ELSE 'rejected' END,
                           r, 100
                    FROM hours, providers, doors, reasons
                    """, .integer(hour))
                try db.execute("""
                    WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
                    INSERT INTO apple_notifications (realm_id, jti, type, outcome, received_at)
                    SELECT 'acme', 'jti-' || CAST(n AS TEXT), CASE WHEN n % 3 = 0 THEN 'email-disabled' ELSE 'consent-revoked' END,
                           'applied', ? - n * 60
                    FROM seq
                    """, .integer(Int64(Self.events / 10)), .integer(now))
            }
            if backend == .postgres {
                try await database.write { db in try db.execute("ANALYZE") }
            }
            var timings: [Double] = []
            for window in ["24h", "7d", "24h", "7d", "24h", "7d"] {
                let started = DispatchTime.now().uptimeNanoseconds
                let response = try await fixture.admin("GET", "/api/admin/realms/acme/overview?window=" + window)
                timings.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
                try expectStatus(200, response)
                let expected: Int64 = window == "24h" ? 24 * 60 * 100 : Int64(Self.reasons.count * 4 * 100) * 24 * 7
                let totals = response.json["totals"]?["attempts"]?.int64Value ?? 0
                // The 7-day window starts at a day boundary, so it holds up to 7 × 24 of the 168 hours.
                #expect(window == "24h" ? totals == expected : totals > 0 && totals <= expected, "\(window): \(totals)")
            }
            let sorted = timings.sorted()
            let median = sorted[sorted.count / 2]
            print("realm overview at \(Self.events) events on \(backend): median \(String(format: "%.1f", median)) ms, "
                  + "max \(String(format: "%.1f", sorted.last ?? 0)) ms")
            if Self.measuring { #expect(median <= 50, "median \(median) ms") }
        }
    }
}
