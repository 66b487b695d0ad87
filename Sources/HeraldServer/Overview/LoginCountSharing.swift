/// Adds this node's sign-in buckets (`LoginCounts.share`) to `login_counts` every
/// `LoginCounts.sharingInterval`; when cancelled it shares once more, so a stopping node loses
/// none of its last logins.
struct LoginCountSharing: Service {
    let counts: LoginCounts
    let logger: Logger

    func run() async throws {
        // A cancelled sleep ends the loop.
        while (try? await Task.sleep(for: LoginCounts.sharingInterval)) != nil {
            await share()
        }
        await share()
    }

    private func share() async {
        do {
            let dropped = try await counts.share()
            if dropped > 0 {
                logger.warning("login_counts_dropped", ["count": .int(dropped), "capacity": .int(LoginCounts.capacity)])
            }
        } catch {
            // The buckets stay and go with the next exchange. Type only: a storage error's text may quote SQL.
            logger.warning("login_counts_not_shared", ["errorType": .string(String(describing: type(of: error)))])
        }
    }
}
