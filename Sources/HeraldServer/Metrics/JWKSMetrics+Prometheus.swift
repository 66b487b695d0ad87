import ProviderKeys

extension JWKSMetrics {
    /// One provider's JWKS fetch counters in the Prometheus text format, for `GET /metrics`:
    /// `herald_<provider>_jwks_*` (Apple's names predate Google's and are kept as they were).
    func prometheusText(provider: String) -> String {
        let fetches = "herald_\(provider)_jwks_fetches_total"
        let skipped = "herald_\(provider)_jwks_skipped_keys_total"
        let title = provider.prefix(1).uppercased() + provider.dropFirst()
        var text = "# HELP \(fetches) \(title) JWKS fetches by outcome.\n"
        text += "# TYPE \(fetches) counter\n"
        for outcome in JWKSFetchOutcome.allCases {
            text += "\(fetches){outcome=\"\(outcome.rawValue)\"} \(count(outcome))\n"
        }
        text += "# HELP \(skipped) Malformed or unsupported keys skipped in \(title)'s JWKS.\n"
        text += "# TYPE \(skipped) counter\n"
        text += "\(skipped) \(skippedKeys)\n"
        return text
    }
}
