-- wrk script: POST one MCP tools/call over and over, and check every answer.
--
-- Arguments (after `--` on the wrk command line), each `key=value`:
--   body=<JSON-RPC request>      the request body; its id is the text in `id_slot`
--   id_slot=<text>               where the id goes in `body`
--   ids=same|unique              `same`: every request has id 1 (a 2026-07-28 request
--                                stands alone); `unique`: every request of the run has
--                                its own id, as requests sharing a legacy session must
--   header=<Name: value>         a request header (repeatable)
--   expect=<text>                the answer must contain one of these (repeatable)
--   refuse=<text>                the answer must contain none of these (repeatable)
--
-- Every response is checked: a status other than 200, or a body that lacks every
-- `expect` text or holds a `refuse` text, is counted. `done` prints one line,
--   MCPBENCH {"requests":...,"checked":...,"non200":...,"bad_body":...,...}
-- with wrk's own counters and latency percentiles (microseconds), which the harness
-- parses; it fails the run when any count of errors is not zero.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_number", #threads)
end

local function split(argument)
  local at = string.find(argument, "=", 1, true)
  if not at then
    error("wrk script argument without '=': " .. argument)
  end
  return string.sub(argument, 1, at - 1), string.sub(argument, at + 1)
end

function init(args)
  local headers = {}
  local body, slot, ids = nil, nil, "same"
  expects = {}
  refuses = {}
  for _, argument in ipairs(args) do
    local key, value = split(argument)
    if key == "body" then
      body = value
    elseif key == "id_slot" then
      slot = value
    elseif key == "ids" then
      ids = value
    elseif key == "header" then
      local colon = string.find(value, ":", 1, true)
      headers[string.sub(value, 1, colon - 1)] = string.gsub(string.sub(value, colon + 1), "^%s+", "")
    elseif key == "expect" then
      table.insert(expects, value)
    elseif key == "refuse" then
      table.insert(refuses, value)
    else
      error("unknown wrk script argument: " .. key)
    end
  end
  local at = string.find(body, slot, 1, true)
  if not at then
    error("the id slot is not in the body")
  end
  body_head = string.sub(body, 1, at - 1)
  body_tail = string.sub(body, at + #slot)
  wrk.method = "POST"
  wrk.headers = headers
  unique = ids == "unique"
  -- ids are thread_number * 10^9 + a counter: unique across the run's threads
  next_id = (thread_number or 1) * 1000000000
  fixed_request = wrk.format(nil, nil, nil, body_head .. "1" .. body_tail)
  checked = 0
  non200 = 0
  bad_body = 0
  first_problem = ""
end

function request()
  if not unique then
    return fixed_request
  end
  next_id = next_id + 1
  return wrk.format(nil, nil, nil, body_head .. next_id .. body_tail)
end

local function body_ok(body)
  for _, text in ipairs(refuses) do
    if string.find(body, text, 1, true) then
      return false
    end
  end
  for _, text in ipairs(expects) do
    if string.find(body, text, 1, true) then
      return true
    end
  end
  return #expects == 0
end

function response(status, headers, body)
  checked = checked + 1
  if status ~= 200 then
    non200 = non200 + 1
  elseif not body_ok(body) then
    bad_body = bad_body + 1
  else
    return
  end
  if first_problem == "" then
    first_problem = "status " .. status .. ": " .. string.sub(body, 1, 300)
  end
end

local function quote(text)
  text = string.gsub(text, "\\", "\\\\")
  text = string.gsub(text, '"', '\\"')
  text = string.gsub(text, "[%c]", " ")
  return '"' .. text .. '"'
end

function done(summary, latency, requests)
  local total_checked, total_non200, total_bad = 0, 0, 0
  local problem = ""
  for _, thread in ipairs(threads) do
    total_checked = total_checked + thread:get("checked")
    total_non200 = total_non200 + thread:get("non200")
    total_bad = total_bad + thread:get("bad_body")
    if problem == "" then
      problem = thread:get("first_problem") or ""
    end
  end
  local errors = summary.errors
  io.write(string.format(
    'MCPBENCH {"requests":%d,"duration_us":%d,"checked":%d,"non200":%d,"bad_body":%d,'
      .. '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"status_errors":%d,'
      .. '"timeouts":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,'
      .. '"first_problem":%s}\n',
    summary.requests, summary.duration, total_checked, total_non200, total_bad,
    errors.connect, errors.read, errors.write, errors.status, errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    latency.mean, quote(problem)
  ))
end
