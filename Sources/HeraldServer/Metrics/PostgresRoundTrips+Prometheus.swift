import Storage

extension PostgresRoundTrips {
    /// The round-trip counter in the Prometheus text format, for `GET /metrics`.
    var prometheusText: String {
        "# HELP herald_postgres_round_trips_total Requests sent to PostgreSQL and waited for (a pipeline counts once).\n"
            + "# TYPE herald_postgres_round_trips_total counter\n"
            + "herald_postgres_round_trips_total \(total)\n"
    }
}
