-- A client of W1's sales orders on Tarantool: one net.box connection,
-- Tarantool's own client.
--
--   PORT call FUNCTION [ARG]: prints the function's result as JSON.
--   PORT orders CLIENT CLIENTS ITERATIONS SEED: ITERATIONS x 20 calls of
--     insert_sales_order with the driver's random arguments.
--   PORT ship CLIENT CLIENTS: ships this client's share of the orders,
--     one update_sales_order_ship_info call each.
--
-- A timed mode connects, writes `ready-CLIENT`, waits for the file `go`,
-- then prints how many calls it made and each call's latency in
-- microseconds, one a line.
local nb = require('net.box')
local clock = require('clock')
local fiber = require('fiber')
local json = require('json')

local port, mode = arg[1], arg[2]
local c = nb.connect('127.0.0.1:' .. port)
if not c:is_connected() then error('cannot connect: ' .. tostring(c.error)) end
if mode == 'call' then
    local args = arg[4] and {arg[4]} or {}
    local result = c:call(arg[3], args, {timeout = 600})
    print(json.encode(result == nil and json.NULL or result))
    os.exit(0)
end

local client, clients = tonumber(arg[3]), tonumber(arg[4])
local calls = {}
if mode == 'orders' then
    local iterations, seed = tonumber(arg[5]), tonumber(arg[6])
    math.randomseed(seed)
    for i = 1, iterations * 20 do
        calls[i] = {'insert_sales_order', {math.random(1, 8000), math.random(1, 10000), math.random(1, 10000),
                                           math.random(1, 5), math.random(1, 106)}}
    end
elseif mode == 'ship' then
    local ids = c:call('order_ids', {}, {timeout = 600})
    local per = math.floor(#ids / clients)
    for i = client * per + 1, (client + 1) * per do
        calls[#calls + 1] = {'update_sales_order_ship_info', {ids[i], 0, 'TRK-' .. ids[i]}, now = 2}
    end
else
    error('unknown mode ' .. mode)
end

local f = io.open('ready-' .. client, 'w') f:close()
while true do
    local go = io.open('go')
    if go then go:close() break end
    fiber.sleep(0.001)
end
local latencies = {}
for i, call in ipairs(calls) do
    -- The ship date is the clock when the call is made.
    if call.now then call[2][call.now] = clock.time() end
    local started = clock.monotonic64()
    c:call(call[1], call[2])
    latencies[i] = tonumber((clock.monotonic64() - started) / 1000)
end
io.write(#calls, '\n', table.concat(latencies, '\n'), '\n')
os.exit(0)
