import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Grants
import JOSE
import ProviderKeys

/// Calls Apple's `/auth/token` (authorization-code exchange) and `/auth/revoke` under a base
/// URL (`HERALD_APPLE_BASE_URL`; tests point it at a fake on loopback). Each call has connect
/// and total timeouts and a response cap, refuses redirects, and suspends instead of blocking
/// a thread (the same download as the JWKS client). A 4xx is read for Apple's `error`, so a
/// refusal (`invalid_client`, `invalid_grant`) is told apart from an outage.
public struct AppleAPIClient: Sendable {
    public static let defaultBaseURL = URL(string: "https://appleid.apple.com")!
    /// At most this many code exchanges wait on Apple at once, native and web together (each
    /// may take its 10 s timeout): a burst of logins or posted callbacks while Apple is slow
    /// must not pile up connections. Over it an exchange fails at once as `busy`.
    public static let maximumExchangesInFlight = 32
    static let maximumResponseBytes = 65_536
    static let connectTimeout: TimeInterval = 5
    static let totalTimeout: TimeInterval = 10

    public let baseURL: URL
    private let exchangeSlots: AppleExchangeSlots

    public init(baseURL: URL = AppleAPIClient.defaultBaseURL,
                maximumExchangesInFlight: Int = AppleAPIClient.maximumExchangesInFlight) {
        self.baseURL = baseURL
        exchangeSlots = AppleExchangeSlots(capacity: maximumExchangesInFlight)
    }

    /// Exchanges an authorization code. `redirectURI` is required for codes from the web flow
    /// and absent for native ones.
    public func exchange(code: String, clientID: String, clientSecret: String,
                         redirectURI: String? = nil) async -> Result<AppleTokenGrant, AppleAPIFailure> {
        guard exchangeSlots.take() else { return .failure(.busy) }
        defer { exchangeSlots.give() }
        var form = [("grant_type", "authorization_code"), ("code", code), ("client_id", clientID),
                    ("client_secret", clientSecret)]
        if let redirectURI { form.append(("redirect_uri", redirectURI)) }
        switch await post("auth/token", form) {
        case .failure(let failure): return .failure(failure)
        case .success(let body):
            guard let object = (try? JSONValue.parse(body))?.objectValue else { return .failure(.invalid) }
            return .success(AppleTokenGrant(refreshToken: object["refresh_token"]?.stringValue,
                                            idToken: object["id_token"]?.stringValue))
        }
    }

    /// Revokes a refresh token (Apple ends the user's authorization of the app).
    public func revoke(refreshToken: String, clientID: String, clientSecret: String) async -> Result<Void, AppleAPIFailure> {
        await post("auth/revoke", [("client_id", clientID), ("client_secret", clientSecret), ("token", refreshToken),
                                   ("token_type_hint", "refresh_token")]).map { _ in () }
    }

    private func post(_ path: String, _ form: [(String, String)]) async -> Result<[UInt8], AppleAPIFailure> {
        let download = JWKSDownload(maximumBytes: Self.maximumResponseBytes, readsRefusals: true)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.totalTimeout
        configuration.timeoutIntervalForResource = Self.totalTimeout
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: download, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.timeoutInterval = Self.totalTimeout
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Data(form.map { "\(RedirectURI.encode($0.0))=\(RedirectURI.encode($0.1))" }
            .joined(separator: "&").utf8)
        switch await download.run(task: session.dataTask(with: request), connectTimeout: Self.connectTimeout,
                                  totalTimeout: Self.totalTimeout) {
        case .body(let body, _): return .success(body)
        case .refused(_, let body):
            // RFC 6749 §5.2's `error`, which Apple uses; only known codes become labels.
            let failure: AppleAPIFailure = switch (try? JSONValue.parse(body))?.objectValue?["error"]?.stringValue {
            case "invalid_client": .invalidClient
            case "invalid_grant": .invalidGrant
            default: .refused
            }
            return .failure(failure)
        case .failure(let outcome):
            let failure: AppleAPIFailure = switch outcome {
            case .timeout: .timeout
            case .tooLarge: .tooLarge
            case .httpError: .httpError
            case .networkError: .networkError
            case .success, .invalid: .invalid
            }
            return .failure(failure)
        }
    }
}
