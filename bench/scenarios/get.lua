-- wrk script for plain GETs (/healthz, /jwks.json): only the machine-readable summary line.
function done(summary, latency, requests)
    io.write(string.format(
        "BENCH {\"requests\":%d,\"seconds\":%.3f,\"non2xx\":%d,\"socketErrors\":%d,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f,\"bodiesUsed\":0,\"bodiesAvailable\":0,\"wrappedThreads\":0}\n",
        summary.requests, summary.duration / 1e6, summary.errors.status,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
