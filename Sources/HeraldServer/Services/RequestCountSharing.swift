/// Shares this node's request counts (`RequestRateLimiter.share`) every
/// `RequestRateLimiter.sharingInterval`; when cancelled it shares once more, so the other nodes
/// see this node's last hits.
struct RequestCountSharing: Service {
    let limiter: RequestRateLimiter
    let logger: Logger

    func run() async throws {
        // A cancelled sleep ends the loop.
        while (try? await Task.sleep(for: RequestRateLimiter.sharingInterval)) != nil {
            await share()
        }
        // The exchange runs in the limiter's own serial chain, so being cancelled does not cut it short.
        await share()
    }

    private func share() async {
        do {
            try await limiter.share()
        } catch {
            // The hits stay unshared and go with the next exchange. Type only: a storage error's
            // text may quote SQL.
            logger.warning("request_counts_not_shared", ["errorType": .string(String(describing: type(of: error)))])
        }
    }
}
