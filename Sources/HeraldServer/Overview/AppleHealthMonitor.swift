import Foundation
import Realms

/// Checks every realm's Apple health every `interval`, so `herald_apple_health_warning` holds for
/// realms nobody opens in the console (Prometheus alerts on the gauge, not on the page). Each
/// realm costs the overview's Apple reads: a few indexed lookups.
struct AppleHealthMonitor: Service {
    static let interval: Duration = .seconds(300)

    let realms: RealmStore
    let overviews: RealmOverviews
    let logger: Logger
    let now: @Sendable () -> Date

    func run() async throws {
        repeat {
            await checkAll()
        } while (try? await Task.sleep(for: Self.interval)) != nil
    }

    /// One round over every realm, a page at a time; after a full round the gauges of realms
    /// that are gone are dropped.
    func checkAll() async {
        var page = PageRequest.first
        var seen: Set<String> = []
        do {
            while !Task.isCancelled {
                let realmPage = try await realms.list(page: page)
                let at = now().unixSeconds
                for realm in realmPage.items where !Task.isCancelled {
                    seen.insert(realm.id)
                    do {
                        _ = try await overviews.appleHealth(realmID: realm.id, since: RealmOverviewWindow.week.start(at: at),
                                                            at: at)
                    } catch let error as RealmsError where error.code == .notFound {
                        continue  // deleted since it was listed
                    }
                }
                guard let next = realmPage.nextCursor else {
                    overviews.warnings.retain(realmIDs: seen)
                    return
                }
                page = try PageRequest(limit: PageRequest.maxLimit, cursor: next)
            }
        } catch {
            // The next round tries again; type only, a storage error's text may quote SQL.
            logger.warning("apple_health_check_failed", ["errorType": .string(String(describing: type(of: error)))])
        }
    }
}
