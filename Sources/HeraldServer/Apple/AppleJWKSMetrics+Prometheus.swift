import HeraldApple

extension AppleJWKSMetrics {
    /// The Apple JWKS fetch counters in the Prometheus text format, for `GET /metrics`.
    var prometheusText: String {
        var text = "# HELP herald_apple_jwks_fetches_total Apple JWKS fetches by outcome.\n"
        text += "# TYPE herald_apple_jwks_fetches_total counter\n"
        for outcome in AppleJWKSFetchOutcome.allCases {
            text += "herald_apple_jwks_fetches_total{outcome=\"\(outcome.rawValue)\"} \(count(outcome))\n"
        }
        text += "# HELP herald_apple_jwks_skipped_keys_total Malformed or unsupported keys skipped in Apple's JWKS.\n"
        text += "# TYPE herald_apple_jwks_skipped_keys_total counter\n"
        text += "herald_apple_jwks_skipped_keys_total \(skippedKeys)\n"
        return text
    }
}
