import Storage

extension PostgresRoundTrips {
    /// The round-trip counter in the Prometheus text format, for `GET /metrics`.
    var prometheusText: String {
        "# HELP herald_postgres_round_trips_total Requests sent to PostgreSQL and waited for (a pipeline counts once).\n"
            + "# TYPE herald_postgres_round_trips_total counter\n"
            + "herald_postgres_round_trips_total \(total)\n"
    }
}

extension PostgresWriteConflicts {
    /// The write-conflict counter in the Prometheus text format, for `GET /metrics`.
    var prometheusText: String {
        "# HELP herald_postgres_write_conflicts_total Write attempts that failed with a serialization failure or deadlock (each ran again, or answered 503 on its last attempt).\n"
            + "# TYPE herald_postgres_write_conflicts_total counter\n"
            + "herald_postgres_write_conflicts_total \(total)\n"
    }
}

extension PostgresPoolUsage {
    /// The connection pool's gauges and wait counter in the Prometheus text format, for `GET /metrics`.
    var prometheusText: String {
        "# HELP herald_postgres_connections PostgreSQL connections this node keeps (HERALD_DATABASE_CONNECTIONS).\n"
            + "# TYPE herald_postgres_connections gauge\n"
            + "herald_postgres_connections \(size)\n"
            + "# HELP herald_postgres_connections_in_use PostgreSQL connections running a transaction now.\n"
            + "# TYPE herald_postgres_connections_in_use gauge\n"
            + "herald_postgres_connections_in_use \(inUse)\n"
            + "# HELP herald_postgres_connection_waits_total Transactions that found every connection in use and waited for one.\n"
            + "# TYPE herald_postgres_connection_waits_total counter\n"
            + "herald_postgres_connection_waits_total \(waits)\n"
    }
}

extension PostgresConnectionLosses {
    /// The lost-connection counters in the Prometheus text format, for `GET /metrics`.
    var prometheusText: String {
        "# HELP herald_postgres_transactions_rerun_total Transactions run again on a new connection after theirs was lost or refused before COMMIT.\n"
            + "# TYPE herald_postgres_transactions_rerun_total counter\n"
            + "herald_postgres_transactions_rerun_total \(rerunTransactions)\n"
            + "# HELP herald_postgres_lost_commits_resolved_total Transactions whose connection was lost after COMMIT was sent, by what reading the database afterwards found.\n"
            + "# TYPE herald_postgres_lost_commits_resolved_total counter\n"
            + "herald_postgres_lost_commits_resolved_total{outcome=\"committed\"} \(lostCommitsFoundCommitted)\n"
            + "herald_postgres_lost_commits_resolved_total{outcome=\"not_committed\"} \(lostCommitsFoundNotCommitted)\n"
            + "# HELP herald_postgres_commit_outcome_unknown_total Transactions whose connection was lost after COMMIT was sent and whose outcome stayed unknown (answered 503).\n"
            + "# TYPE herald_postgres_commit_outcome_unknown_total counter\n"
            + "herald_postgres_commit_outcome_unknown_total \(unknownCommitOutcomes)\n"
    }
}

extension SQLiteCommitBatches {
    /// Writes per commit as a Prometheus histogram, for `GET /metrics`.
    var prometheusText: String {
        var text = "# HELP herald_sqlite_commit_batch_size Writes that shared one SQLite commit (group commit).\n"
            + "# TYPE herald_sqlite_commit_batch_size histogram\n"
        let snapshot = self.snapshot
        var cumulative = 0
        for (bound, count) in zip(Self.bounds, snapshot.bucketCounts) {
            cumulative += count
            text += "herald_sqlite_commit_batch_size_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        text += "herald_sqlite_commit_batch_size_bucket{le=\"+Inf\"} \(cumulative)\n"
            + "herald_sqlite_commit_batch_size_sum \(snapshot.writes)\n"
            + "herald_sqlite_commit_batch_size_count \(cumulative)\n"
        return text
    }
}
