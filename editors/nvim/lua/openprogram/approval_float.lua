--[[
Approvals in a floating window of our own (`setup({ approvals = { ui = 'float' } })`, the
default): the whole request (title, every part of a command, a child's task, the complete diff,
scrollable) with the server's options in the window bar.

The float opens without taking the cursor, so keys the user is typing elsewhere never answer
it: its border is highlighted and a notification says an approval waits. `:OpenProgramApproval`
(or `ga` in the panel) moves into it; there `1`..`4` or <CR> on an option line choose, `q`
goes back without answering. Requests that arrive while one is open wait their turn. When the
server withdraws a request (timeout, cancelled turn) its float closes at once.
]]

local M = {}

---@class openprogram.FloatRequest
---@field params table requestPermission params
---@field resolve fun(value: any)
---@field buf? integer
---@field win? integer
---@field prev_win? integer

---@type openprogram.FloatRequest[]
M.queue = {}

local ns = vim.api.nvim_create_namespace('openprogram.approval')

--- The lines the float shows for a request, and where its options start (1-based).
---@param params table
---@return string[] lines
---@return integer options_at
function M.lines(params)
  local tc = params.toolCall or {}
  local input = type(tc.input) == 'table' and tc.input or {}
  local out = { ('%s [%s]: %s'):format(tc.name or '?', tc.kind or 'other', tc.title or tc.name or '?') }
  if type(tc.sandboxed) == 'boolean' then
    table.insert(out, tc.sandboxed and 'runs in the sandbox' or 'runs WITHOUT a sandbox')
  end
  if type(tc.parts) == 'table' and #tc.parts > 1 then
    table.insert(out, 'every command it runs:')
    for _, part in ipairs(tc.parts) do
      table.insert(out, '  $ ' .. tostring(part))
    end
  elseif type(input.command) == 'string' then
    for _, l in ipairs(vim.split(input.command, '\n', { plain = true })) do
      table.insert(out, '  $ ' .. l)
    end
  end
  if type(tc.mcp) == 'table' then
    if type(tc.mcp.description) == 'string' and tc.mcp.description ~= '' then
      table.insert(out, 'what the server says it does:')
      for _, l in ipairs(vim.split(tc.mcp.description, '\n', { plain = true })) do
        table.insert(out, '  ' .. l)
      end
    end
    table.insert(out, ('MCP server %s · tool %s · arguments:'):format(tostring(tc.mcp.server), tostring(tc.mcp.tool)))
    for _, l in ipairs(require('openprogram.approvals').argument_lines(tc)) do
      table.insert(out, '  ' .. l)
    end
  end
  if tc.name == 'agent' and type(input.prompt) == 'string' then
    table.insert(out, 'task of the child agent:')
    for _, l in ipairs(vim.split(input.prompt, '\n', { plain = true })) do
      table.insert(out, '  ' .. l)
    end
  end
  table.insert(out, '')
  local options_at = #out + 1
  for i, o in ipairs(params.options or {}) do
    table.insert(out, ('[%d] %s'):format(i, o.name or o.optionId))
  end
  if type(tc.diff) == 'table' and tc.diff.path then
    table.insert(out, '')
    vim.list_extend(out, require('openprogram.approvals').diff_lines(tc.diff))
  end
  return out, options_at
end

---@return openprogram.FloatRequest?
local function showing()
  local r = M.queue[1]
  if r and r.win and vim.api.nvim_win_is_valid(r.win) then
    return r
  end
  return nil
end

---@param r openprogram.FloatRequest
local function close(r)
  if r.win and vim.api.nvim_win_is_valid(r.win) then
    local was_current = vim.api.nvim_get_current_win() == r.win
    vim.api.nvim_win_close(r.win, true)
    if was_current and r.prev_win and vim.api.nvim_win_is_valid(r.prev_win) then
      vim.api.nvim_set_current_win(r.prev_win)
    end
  end
  r.win, r.buf = nil, nil
end

local show_next

---@param r openprogram.FloatRequest
---@param value any
local function settle(r, value)
  for i, q in ipairs(M.queue) do
    if q == r then
      table.remove(M.queue, i)
      break
    end
  end
  close(r)
  r.resolve(value)
  vim.schedule(show_next)
end

---@param r openprogram.FloatRequest
local function open(r)
  local lines, options_at = M.lines(r.params)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'diff' -- the diff part is highlighted; the header reads as plain text
  local cols, rows = vim.o.columns, vim.o.lines
  local width = math.min(math.max(50, math.floor(cols * 0.6)), cols - 4)
  local height = math.max(5, math.min(#lines, rows - 6))
  local tc = r.params.toolCall or {}
  local waiting = #M.queue > 1 and (' · %d more waiting'):format(#M.queue - 1) or ''
  local win = vim.api.nvim_open_win(buf, false, {
    relative = 'editor', row = math.max(0, math.floor((rows - height) / 2) - 1),
    col = math.floor((cols - width) / 2), width = width, height = height, border = 'double',
    title = (' Approval waiting: %s%s '):format(tc.title or tc.name or '?', waiting), title_pos = 'center',
    footer = ' :OpenProgramApproval to answer · 1-4 choose · q back ', footer_pos = 'center',
    focusable = true, zindex = 60,
  })
  vim.wo[win].winhighlight = 'FloatBorder:DiagnosticWarn,FloatTitle:DiagnosticWarn'
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true
  local bar = {}
  for i, o in ipairs(r.params.options or {}) do
    table.insert(bar, ('%d %s'):format(i, o.name or o.optionId))
  end
  vim.wo[win].winbar = (table.concat(bar, ' · '):gsub('%%', '%%%%'))
  for i = options_at, options_at + #(r.params.options or {}) - 1 do
    vim.api.nvim_buf_set_extmark(buf, ns, i - 1, 0, { line_hl_group = 'PmenuSel', end_col = 0 })
  end
  r.buf, r.win = buf, win
  local function choose(i)
    local o = (r.params.options or {})[i]
    if o then
      settle(r, o)
    end
  end
  local function map(lhs, fn)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  for i = 1, #(r.params.options or {}) do
    map(tostring(i), function()
      choose(i)
    end)
  end
  map('<CR>', function()
    local row = vim.api.nvim_win_get_cursor(win)[1]
    choose(row - options_at + 1)
  end)
  map('q', function()
    if r.prev_win and vim.api.nvim_win_is_valid(r.prev_win) then
      vim.api.nvim_set_current_win(r.prev_win)
    end
  end)
  map('<Esc>', function()
    if r.prev_win and vim.api.nvim_win_is_valid(r.prev_win) then
      vim.api.nvim_set_current_win(r.prev_win)
    end
  end)
  vim.notify(('openprogram: approval waiting: %s (:OpenProgramApproval to answer)'):format(
    tc.title or tc.name or '?'), vim.log.levels.WARN)
end

show_next = function()
  local r = M.queue[1]
  if r and not (r.win and vim.api.nvim_win_is_valid(r.win)) then
    open(r)
  end
end

--- Move the cursor into the waiting approval (`:OpenProgramApproval`).
---@return boolean found
function M.focus()
  local r = showing()
  if not r then
    vim.notify('openprogram: no approval is waiting', vim.log.levels.INFO)
    return false
  end
  local cur = vim.api.nvim_get_current_win()
  if cur ~= r.win then
    r.prev_win = cur
  end
  vim.api.nvim_set_current_win(r.win)
  return true
end

--- The request whose float is on screen (for tests and statuslines).
---@return table? params
function M.current()
  local r = showing()
  return r and r.params or nil
end

--- Ask through the float; `resolve` gets the chosen option, or what a withdrawal passes.
---@param params table
---@param resolve fun(value: any)
---@return fun(value: any) settle_from_outside (withdrawal: closes the float)
function M.ask(params, resolve)
  ---@type openprogram.FloatRequest
  local r = { params = params, resolve = resolve }
  table.insert(M.queue, r)
  show_next()
  return function(value)
    for _, q in ipairs(M.queue) do
      if q == r then
        settle(r, value)
        return
      end
    end
  end
end

return M
