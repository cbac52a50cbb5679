-- W1's sales orders on Tarantool: the tables of examples/sales-orders as
-- memtx spaces with every column, the same seed rows, and the two routines
-- as Lua functions that do the same reads and writes in one box
-- transaction each. Numeric columns are Tarantool decimals, rounded as
-- numeric(19,4) is; timestamps are seconds since the epoch.
--
-- Arguments: the port, then the file of sample orders (one per line:
-- "order_no qty,product_id,special_offer_id;..."). Commits are durable
-- (wal_mode 'fsync'; the log thread groups commits). Writes `ready` when
-- loaded.
local port, seed_file = arg[1], arg[2]
box.cfg{listen = '127.0.0.1:' .. port, wal_mode = 'fsync', log_level = 2,
        memtx_memory = 4 * 1024 * 1024 * 1024, checkpoint_interval = 0}
box.schema.user.grant('guest', 'read,write,execute', 'universe', nil, {if_not_exists = true})

local decimal = require('decimal')
local clock = require('clock')
local D = decimal.new
local NULL = box.NULL

local function nullable(name, type) return {name = name, type = type, is_nullable = true} end

-- Timestamps of the seed rows, as centum.sql writes them.
local T_2011_04_01, T_2011_05_01, T_2011_05_31 = 1301616000, 1304208000, 1306800000
local T_2014_02_08, T_2014_11_30 = 1391853696, 1417305600

local product = box.schema.space.create('product', {format = {
    {'product_id', 'unsigned'}, {'name', 'string'}, {'product_number', 'string'}, {'make_flag', 'boolean'},
    {'finished_goods_flag', 'boolean'}, nullable('color', 'string'), {'safety_stock_level', 'integer'},
    {'reorder_point', 'integer'}, {'standard_cost', 'decimal'}, {'list_price', 'decimal'},
    {'days_to_manufacture', 'integer'}, {'sell_start_date', 'number'}, {'modified_date', 'number'}}})
product:create_index('pk', {type = 'hash', parts = {'product_id'}})

local special_offer = box.schema.space.create('special_offer', {format = {
    {'special_offer_id', 'unsigned'}, {'description', 'string'}, {'discount_pct', 'decimal'}, {'type', 'string'},
    {'category', 'string'}, {'start_date', 'number'}, {'end_date', 'number'}, {'min_qty', 'integer'},
    nullable('max_qty', 'integer'), {'modified_date', 'number'}}})
special_offer:create_index('pk', {type = 'hash', parts = {'special_offer_id'}})

local special_offer_product = box.schema.space.create('special_offer_product', {format = {
    {'special_offer_id', 'unsigned'}, {'product_id', 'unsigned'}, {'modified_date', 'number'}}})
special_offer_product:create_index('pk', {parts = {'special_offer_id', 'product_id'}})
special_offer_product:create_index('product', {unique = false, parts = {'product_id'}})

box.schema.sequence.create('sales_order_id_seq')
local header = box.schema.space.create('sales_order_header', {format = {
    {'sales_order_id', 'unsigned'}, {'revision_number', 'integer'}, {'order_date', 'number'},
    {'due_date', 'number'}, nullable('ship_date', 'number'), {'status', 'integer'},
    {'online_order_flag', 'boolean'}, nullable('purchase_order_number', 'string'),
    nullable('account_number', 'string'), {'customer_id', 'integer'}, nullable('sales_person_id', 'integer'),
    nullable('territory_id', 'integer'), {'bill_to_address_id', 'integer'}, {'ship_to_address_id', 'integer'},
    {'ship_method_id', 'integer'}, nullable('credit_card_id', 'integer'),
    nullable('credit_card_approval_code', 'string'), nullable('currency_rate_id', 'integer'),
    {'sub_total', 'decimal'}, {'tax_amt', 'decimal'}, {'freight', 'decimal'}, {'total_due', 'decimal'},
    nullable('comment', 'string'), {'modified_date', 'number'}}})
-- The sample's hash index on the key; memtx hash indexes must be unique,
-- so the two on columns with repeated values are trees.
header:create_index('pk', {type = 'hash', parts = {'sales_order_id'}})
header:create_index('customer', {unique = false, parts = {'customer_id'}})
header:create_index('sales_person', {unique = false, parts = {{'sales_person_id', 'integer', is_nullable = true}}})

local detail = box.schema.space.create('sales_order_detail', {format = {
    {'sales_order_id', 'unsigned'}, {'sales_order_detail_id', 'unsigned'},
    nullable('carrier_tracking_number', 'string'), {'order_qty', 'integer'}, {'product_id', 'integer'},
    {'special_offer_id', 'integer'}, {'unit_price', 'decimal'}, {'unit_price_discount', 'decimal'},
    {'line_total', 'decimal'}, {'modified_date', 'number'}}})
detail:create_index('pk', {type = 'hash', parts = {'sales_order_id', 'sales_order_detail_id'}})
detail:create_index('order', {unique = false, parts = {'sales_order_id'}})
detail:create_index('product', {unique = false, parts = {'product_id'}})

local seed = box.schema.space.create('demo_sales_order_seed', {format = {
    {'order_no', 'unsigned'}, {'lines', 'array'}}})
seed:create_index('pk', {type = 'hash', parts = {'order_no'}})

-- Seed data, with centum.sql's values.
box.begin()
for i = 1, 1000 do
    local colors = {[0] = 'Black', [1] = 'Red', [2] = 'Silver'}
    product:insert{i, 'Product ' .. i, string.format('PN-%05d', i), true, true, colors[i % 4] or NULL,
        100 + i % 900, 75 + i % 600, D(i % 97) * D('2.5') + D('1.99'), D(i % 97) * D('4.25') + D('3.99'),
        i % 5, T_2011_05_31, T_2014_02_08}
end
for i = 1, 16 do
    local discount = i == 1 and D(0) or D((i * 7) % 40 + 2) * D('0.01')
    local kind = (i == 1 and 'No Discount') or (i % 3 == 0 and 'Volume Discount') or 'Seasonal Discount'
    special_offer:insert{i, i == 1 and 'No Discount' or 'Offer ' .. i, discount, kind,
        i % 2 == 0 and 'Reseller' or 'Customer', T_2011_05_01, T_2014_11_30, 0, NULL, T_2011_04_01}
end
for i = 1, 1000 do
    special_offer_product:insert{1, i, T_2011_04_01}
    special_offer_product:insert{i % 15 + 2, i, T_2011_04_01}
end
for line in io.lines(seed_file) do
    local order_no, rest = line:match('^(%d+) (.*)$')
    local lines = {}
    for qty, product_id, offer_id in rest:gmatch('(%d+),(%d+),(%d+)') do
        table.insert(lines, {tonumber(qty), tonumber(product_id), tonumber(offer_id)})
    end
    seed:insert{tonumber(order_no), lines}
end
box.commit()

local ZERO = D(0)
local TAX, FREIGHT = D('0.08'), D('0.025')

local function raise(code, message)
    error(string.format('%s %s', code, message))
end

-- insert_sales_order of centum.sql, with the lines of sample order
-- `order_no` (the driver's `(SELECT lines FROM demo_sales_order_seed ...)`).
function insert_sales_order(customer_id, bill_to_address_id, ship_to_address_id, ship_method_id, order_no)
    return box.atomic(function()
        local sample = seed:get(order_no)
        local lines = sample and sample[2]
        if lines == nil or #lines == 0 then raise('22023', 'an order needs at least one line') end
        local now = clock.time()
        local order_id = box.sequence.sales_order_id_seq:next()
        header:insert{order_id, 0, now, now, NULL, 1, true, NULL, NULL, customer_id, NULL, NULL,
            bill_to_address_id, ship_to_address_id, ship_method_id, NULL, NULL, NULL,
            ZERO, ZERO, ZERO, ZERO, NULL, now}
        local sub_total = ZERO
        for line_no, line in ipairs(lines) do
            local qty, product_id, offer_id = line[1], line[2], line[3]
            local p = product:get(product_id)
            if p == nil then raise('23503', 'product ' .. product_id .. ' does not exist') end
            local o = special_offer:get(offer_id)
            if o == nil then raise('23503', 'special offer ' .. offer_id .. ' does not exist') end
            local price, discount = p[10], o[3]
            local line_total = decimal.round(qty * price * (1 - discount), 4)
            detail:insert{order_id, line_no, NULL, qty, product_id, offer_id, price, discount, line_total, now}
            sub_total = sub_total + line_total
        end
        local tax = decimal.round(sub_total * TAX, 4)
        local freight = decimal.round(sub_total * FREIGHT, 4)
        header:update(order_id, {{'=', 19, sub_total}, {'=', 20, tax}, {'=', 21, freight},
            {'=', 22, sub_total + tax + freight}})
        return order_id
    end)
end

-- update_sales_order_ship_info of centum.sql: the header's ship date,
-- status and revision, and every line's tracking number.
function update_sales_order_ship_info(order_id, ship_date, tracking)
    return box.atomic(function()
        local h = header:update(order_id, {{'=', 5, ship_date}, {'=', 6, 5}, {'+', 2, 1}, {'=', 24, ship_date}})
        if h == nil then raise('P0002', 'sales order ' .. order_id .. ' does not exist') end
        local lines = detail.index.order:select(order_id)
        for _, d in ipairs(lines) do
            detail:update({d[1], d[2]}, {{'=', 3, tracking}, {'=', 10, ship_date}})
        end
        return #lines
    end)
end

-- reset_sales_orders: every order gone.
function reset_sales_orders()
    detail:truncate()
    header:truncate()
end

-- The ids of every order, in order.
function order_ids()
    local ids = {}
    for _, h in header:pairs() do table.insert(ids, h[1]) end
    table.sort(ids)
    return ids
end

-- check.sql: 'ok', or the first rule broken and how often.
function check()
    local totals, orphans = {}, 0
    for _, d in detail:pairs() do
        if header:get(d[1]) == nil then orphans = orphans + 1 end
        totals[d[1]] = (totals[d[1]] or ZERO) + d[9]
    end
    local empty, wrong_sub_total, wrong_total_due = 0, 0, 0
    for _, h in header:pairs() do
        local lines_total = totals[h[1]]
        if lines_total == nil then
            empty = empty + 1
        elseif lines_total ~= h[19] then
            wrong_sub_total = wrong_sub_total + 1
        end
        if h[22] ~= h[19] + h[20] + h[21] then wrong_total_due = wrong_total_due + 1 end
    end
    if orphans > 0 then return 'details without a header: ' .. orphans end
    if empty > 0 then return 'headers without details: ' .. empty end
    if wrong_sub_total > 0 then return 'sub_total differs from the sum of its lines: ' .. wrong_sub_total end
    if wrong_total_due > 0 then return 'total_due differs from sub_total + tax_amt + freight: ' .. wrong_total_due end
    return 'ok'
end

-- Counts for the run's checks: headers, unshipped headers, lines whose
-- tracking number is not their order's.
function counts()
    local unshipped = 0
    for _, h in header:pairs() do
        if h[5] == nil then unshipped = unshipped + 1 end
    end
    local untracked = 0
    for _, d in detail:pairs() do
        if header:get(d[1])[5] ~= nil and d[3] ~= 'TRK-' .. d[1] then untracked = untracked + 1 end
    end
    return {header:len(), unshipped, untracked}
end

-- Bytes of each space's tuples and of each of its indexes, with its rows:
-- {rows, tuple bytes, {index name, bytes}...}.
function sizes(space)
    local s = box.space[space]
    local out = {s:len(), s:bsize()}
    for _, name in ipairs({'pk', 'customer', 'sales_person', 'order', 'product'}) do
        if s.index[name] ~= nil then table.insert(out, {name, s.index[name]:bsize()}) end
    end
    return out
end

local f = io.open('ready', 'w') f:write('ready') f:close()
