-- wrk script: the whole third-party flow, three chained requests per flow:
--   1. GET  /authorize (Accept: application/json)          → {"downstreamState": …}
--   2. POST /apple/native-login, branch B (downstreamState) → {"redirectUri": "…?code=…&state=…"}
--   3. POST /token grant_type=authorization_code + PKCE verifier + client_secret_post
--
-- wrk's Lua state is per thread, not per connection, and a connection's next request() is not
-- called right after its response(), so a flow does not stay on one connection: each answer
-- queues the flow's next step on its thread, and request() sends queued steps first and only
-- then starts a new flow. HTTP is stateless, so which keep-alive connection carries a step does
-- not matter; step 3 finds its PKCE verifier by the `state` the redirect carries.
--
-- $BENCH_FLOWS has one flow per line, tab-separated: the /authorize path with its query (its
-- own state and S256 challenge), that state, the PKCE verifier, and the native-login body up to
-- the downstreamState value (an identity token used once: the server refuses replays). Thread k
-- of $BENCH_THREADS takes lines k, k+T, …; a thread that has started all its flows finishes
-- the queued steps, then idles (an empty request writes nothing) and creates $BENCH_DRY.<thread>,
-- on which the harness ends the run and reports the pool as dry (dryThreads).
-- Environment: BENCH_FLOWS, BENCH_THREADS, BENCH_DRY, BENCH_LOGIN_PATH, BENCH_TOKEN_PATH,
-- BENCH_TOKEN_FORM (the form's fixed part, URL-encoded: redirect_uri, client_id, client_secret).

local threads = {}
local counter = 0

function setup(thread)
    thread:set("id", counter)
    counter = counter + 1
    table.insert(threads, thread)
end

function init(args)
    local total = tonumber(os.getenv("BENCH_THREADS"))
    login_path = os.getenv("BENCH_LOGIN_PATH")
    token_path = os.getenv("BENCH_TOKEN_PATH")
    token_form = os.getenv("BENCH_TOKEN_FORM")
    flows = {}
    local index = 0
    for line in io.lines(os.getenv("BENCH_FLOWS")) do
        if index % total == id then
            local path, state, verifier, login = line:match("^([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]+)$")
            table.insert(flows, { authorize = wrk.format("GET", path, { Accept = "application/json" }),
                                  state = state, verifier = verifier, login = login })
        end
        index = index + 1
    end
    available = #flows
    started, logins, completed, dry = 0, 0, 0, 0
    dry_marker = os.getenv("BENCH_DRY") and (os.getenv("BENCH_DRY") .. "." .. id)
    verifiers = {}
    queue, head, tail = {}, 1, 0
    -- Before the run wrk calls thread 0's request() once to check the script
    -- (script_verify_request) and never sends what it returns: that call starts no flow.
    verifying = (id == 0)
    json = { ["Content-Type"] = "application/json" }
    form = { ["Content-Type"] = "application/x-www-form-urlencoded" }
end

local function push(request)
    tail = tail + 1
    queue[tail] = request
end

function request()
    if head <= tail then
        local next = queue[head]
        queue[head] = nil
        head = head + 1
        return next
    end
    if started >= available then
        if dry == 0 then
            dry = 1
            if dry_marker then io.open(dry_marker, "w"):close() end
        end
        return ""
    end
    if verifying then
        verifying = false
        return flows[started + 1].authorize
    end
    started = started + 1
    local flow = flows[started]
    verifiers[flow.state] = flow.verifier
    return flow.authorize
end

function response(status, headers, body)
    if status ~= 200 then return end  -- wrk counts >= 400 as errors; the flow is dropped
    local downstream = body:match('"downstreamState"%s*:%s*"([^"]+)"')
    if downstream then
        -- Any unused identity token will do: the next one of this thread's flows.
        logins = logins + 1
        push(wrk.format("POST", login_path, json, flows[logins].login .. downstream .. '"}'))
        return
    end
    local redirect = body:match('"redirectUri"%s*:%s*"([^"]+)"')
    if redirect then
        redirect = redirect:gsub("\\/", "/"):gsub("\\u0026", "&")
        local code, state = redirect:match("[?&]code=([^&]+)"), redirect:match("[?&]state=([^&]+)")
        local verifier = state and verifiers[state]
        if code and verifier then
            verifiers[state] = nil
            push(wrk.format("POST", token_path, form,
                            "grant_type=authorization_code&code=" .. code .. "&code_verifier=" .. verifier .. "&" .. token_form))
        end
        return
    end
    if body:find('"access_token"', 1, true) then
        completed = completed + 1
    end
end

function done(summary, latency, requests)
    local flows_done, started_total, available_total, dry_threads, per_thread = 0, 0, 0, 0, {}
    for _, thread in ipairs(threads) do
        -- The identity tokens a thread sent: the first `logins` of its lines.
        table.insert(per_thread, tostring(thread:get("logins")))
        flows_done = flows_done + thread:get("completed")
        started_total = started_total + thread:get("started")
        available_total = available_total + thread:get("available")
        dry_threads = dry_threads + thread:get("dry")
    end
    io.write(string.format(
        "BENCH {\"requests\":%d,\"seconds\":%.3f,\"non2xx\":%d,\"socketErrors\":%d,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f,\"flows\":%d,\"flowsStarted\":%d,\"bodiesUsed\":%d,\"bodiesAvailable\":%d,\"dryThreads\":%d,\"usedPerThread\":[%s]}\n",
        summary.requests, summary.duration / 1e6, summary.errors.status,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
        flows_done, started_total, started_total, available_total, dry_threads, table.concat(per_thread, ",")))
end
