-- wrk script for the pharmacy service: POSTs events round-robin over SESSIONS sessions that
-- load.sh opened beforehand (ids s0 … s<SESSIONS-1>), alternating addPharmacy and closeMap so
-- that every session's state stays small (searching ↔ loaded).
--
--   SESSIONS=50 wrk -t2 -c50 -d10s -s load.lua http://127.0.0.1:8080
local sessions = tonumber(os.getenv("SESSIONS") or "50")
local bodies = { '{"type":"addPharmacy"}', '{"type":"closeMap"}' }
local headers = { ["Content-Type"] = "application/json" }
local counter = 0
thread_id = 0  -- set per thread by setup()
local threads = {}

function setup(thread)
   thread:set("thread_id", #threads)
   table.insert(threads, thread)
end

function request()
   -- Threads start at different offsets so that they do not walk the sessions in lock step.
   local n = counter + thread_id * 7919
   counter = counter + 1
   local session = n % sessions
   local body = bodies[(math.floor(n / sessions) % 2) + 1]
   return wrk.format("POST", "/sessions/s" .. session .. "/events", headers, body)
end

function response(status, headers, body)
   if status ~= 200 then
      errors = (errors or 0) + 1
   end
end

function done(summary, latency, requests)
   local non200 = 0
   for _, thread in ipairs(threads) do
      non200 = non200 + (thread:get("errors") or 0)
   end
   io.write(string.format(
      "RESULT requests=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f non200=%d socket_errors=%d\n",
      summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000, non200,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
