import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JOSE

/// Fetches a provider's JWKS over HTTP(S) with connect and total timeouts and a response cap.
///
/// Each fetch uses its own ephemeral `URLSession` whose delegate streams the body and cancels
/// the task as soon as the cap is crossed; the caller suspends on a continuation, so a hanging
/// upstream holds no thread. Fetches are rare (the cache allows one per 30 s), so a session
/// per fetch costs nothing that matters and keeps every fetch's state separate.
public final class JWKSClient: JWKSFetching {
    /// The URL, timeouts and cap in use.
    public let configuration: JWKSClientConfiguration

    /// Creates a client.
    public init(configuration: JWKSClientConfiguration) {
        self.configuration = configuration
    }

    /// Fetches and parses the key set once.
    public func fetchKeySet() async -> JWKSFetchResult {
        let download = JWKSDownload(maximumBytes: configuration.maximumResponseBytes)
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.totalTimeout
        sessionConfiguration.timeoutIntervalForResource = configuration.totalTimeout
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        let session = URLSession(configuration: sessionConfiguration, delegate: download, delegateQueue: nil)
        defer { session.invalidateAndCancel() }

        var request = URLRequest(url: configuration.url)
        request.timeoutInterval = configuration.totalTimeout
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let task = session.dataTask(with: request)

        switch await download.run(task: task, connectTimeout: configuration.connectTimeout,
                                  totalTimeout: configuration.totalTimeout) {
        case .failure(let outcome):
            return .failure(outcome)
        case .refused:
            return .failure(.httpError)  // not asked for (`readsRefusals` is off)
        case .body(let body, let cacheControl):
            guard let keySet = try? JWKSet.parse(body), !keySet.keys.isEmpty else { return .failure(.invalid) }
            return .success(keySet, cacheControl: cacheControl)
        }
    }
}
