-- wrk script: POSTs pre-built bodies, one per line of $BENCH_BODIES, each sent at most once.
-- Thread k of $BENCH_THREADS takes lines k, k+T, k+2T, … so no two threads share a body
-- (identity tokens and refresh tokens are single-use: a body sent twice is a failure, not load).
-- A thread never wraps around: once its slice is sent, its connections go idle (request()
-- returns an empty request, so nothing is written) and it creates $BENCH_DRY.<thread>, on
-- which the harness ends the run (SIGINT: wrk stops and prints its summary over the time it
-- actually ran) and reports the pool as dry. done() reports the threads that ran dry.
-- Environment: BENCH_BODIES (file), BENCH_PATH, BENCH_CONTENT_TYPE, BENCH_THREADS, BENCH_DRY
-- (file prefix of the dry markers), and BENCH_CAPTURE (optional file prefix: write each
-- returned refresh token to PREFIX.<thread>, and create PREFIX.<thread>.done once every body
-- of the thread has been answered, so the harness can stop wrk then instead of idling out the
-- duration).

local threads = {}
local counter = 0

function setup(thread)
    thread:set("id", counter)
    counter = counter + 1
    table.insert(threads, thread)
end

function init(args)
    local total = tonumber(os.getenv("BENCH_THREADS"))
    local path = os.getenv("BENCH_PATH")
    local headers = { ["Content-Type"] = os.getenv("BENCH_CONTENT_TYPE") }
    bodies = {}
    local index = 0
    for line in io.lines(os.getenv("BENCH_BODIES")) do
        if index % total == id then
            -- Pre-format whole requests so request() is a table lookup, not string work.
            table.insert(bodies, wrk.format("POST", path, headers, line))
        end
        index = index + 1
    end
    available = #bodies
    used = 0
    -- Before the run wrk calls thread 0's request() once to check the script
    -- (script_verify_request) and never sends what it returns: that call must not use up a
    -- body, or the body is lost and, in capture mode, the thread waits for an answer that never
    -- comes until the run's duration is out.
    verifying = (id == 0)
    dry = 0
    dry_marker = os.getenv("BENCH_DRY") and (os.getenv("BENCH_DRY") .. "." .. id)
    capture = os.getenv("BENCH_CAPTURE")
    answered = 0
    if capture then
        done_marker = capture .. "." .. id .. ".done"
        capture = io.open(capture .. "." .. id, "w")
        capture:setvbuf("line")  -- wrk never closes the file; line buffering loses nothing
        if available == 0 then io.open(done_marker, "w"):close() end
    end
end

function request()
    if used >= available then
        if dry == 0 then
            dry = 1
            if dry_marker then io.open(dry_marker, "w"):close() end
        end
        -- Nothing to write: the connection idles until the harness ends the run.
        return ""
    end
    if verifying then
        verifying = false
        return bodies[used + 1]
    end
    used = used + 1
    return bodies[used]
end

-- Capture mode: keep each refresh token a login returned (pool for the refresh scenario).
-- Defined only then, since wrk hands every body to Lua when response() exists.
if os.getenv("BENCH_CAPTURE") then
    function response(status, headers, body)
        local token = body:match('"refreshToken"%s*:%s*"([^"]+)"') or body:match('"refresh_token"%s*:%s*"([^"]+)"')
        if token then capture:write(token, "\n") end
        answered = answered + 1
        if answered == available then io.open(done_marker, "w"):close() end
    end
end

function done(summary, latency, requests)
    local consumed, available, dry_threads, per_thread = 0, 0, 0, {}
    for _, thread in ipairs(threads) do
        table.insert(per_thread, tostring(thread:get("used")))
        consumed = consumed + thread:get("used")
        available = available + thread:get("available")
        dry_threads = dry_threads + thread:get("dry")
    end
    io.write(string.format(
        "BENCH {\"requests\":%d,\"seconds\":%.3f,\"non2xx\":%d,\"socketErrors\":%d,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f,\"bodiesUsed\":%d,\"bodiesAvailable\":%d,\"dryThreads\":%d,\"usedPerThread\":[%s]}\n",
        summary.requests, summary.duration / 1e6, summary.errors.status,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
        consumed, available, dry_threads, table.concat(per_thread, ",")))
end
