import Foundation
import ProviderKeys

/// Where Google's signing keys come from; fetched and cached by ProviderKeys' ``JWKSCache``
/// with Apple's timing rules (`Cache-Control` freshness, one fetch per 30 s on unknown kids).
public enum GoogleJWKS {
    /// Google's published key set.
    public static let defaultURL = URL(string: "https://www.googleapis.com/oauth2/v3/certs")!
    /// The environment variable that overrides ``defaultURL`` (read by the server's configuration).
    public static let environmentVariable = "HERALD_GOOGLE_JWKS_URL"

    /// The client configuration for `url`, or Google's own key set when nil, with the default
    /// timeouts and cap.
    public static func configuration(url: URL? = nil) -> JWKSClientConfiguration {
        JWKSClientConfiguration(url: url ?? defaultURL)
    }
}
