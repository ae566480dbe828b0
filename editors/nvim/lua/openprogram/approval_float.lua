--[[
Approvals and `ask_user` questions in a floating window of our own (`setup({ approvals = { ui =
'float' } })`, the default): the whole request (title, every part of a command, a child's task,
the complete diff, scrollable; or the question with its options) with the choices in the window
bar.

The float opens without taking the cursor, so keys the user is typing elsewhere never answer
it: its border is highlighted and a notification says a request waits. `:OpenProgramApproval`
(or `ga` in the panel) moves into it; there a number or <CR> on an option line choose, `q`
goes back without answering. A question's "Type an answer…" asks for free text (only once the
user is in the float). Requests that arrive while one is open wait their turn. When the server
withdraws a request (timeout, cancelled turn, answered elsewhere) its float closes at once.

An edit whose card lists hunks (`toolCall.diff.hunks`) has one more choice, "Review hunk by
hunk": it opens `hunk_review.lua`, where `ga`/`gr` accept or reject each hunk and `gs` answers
with only the accepted ones (`acceptedHunks`).
]]

local M = {}

---@class openprogram.FloatRequest
---@field params table requestPermission params, or askQuestion params when `question`
---@field question? boolean
---@field choices? {label: string, value?: any, free?: boolean}[] a question's choices
---@field resolve fun(value: any)
---@field buf? integer
---@field win? integer
---@field prev_win? integer
---@field decisions? table<integer, 'accept'|'reject'> a hunk review's, kept while it is open
---@field review? openprogram.Review the open hunk review

---@type openprogram.FloatRequest[]
M.queue = {}

local ns = vim.api.nvim_create_namespace('openprogram.approval')

--- How many hunks an approval's edit may be reviewed by (0: approved whole only).
---@param params table
---@return integer
function M.hunk_count(params)
  local diff = (params.toolCall or {}).diff
  local hunks = type(diff) == 'table' and diff.hunks or nil
  return type(hunks) == 'table' and #hunks or 0
end

--- The label of the review choice, for an edit with `n` hunks.
---@param n integer
---@return string
local function review_label(n)
  return ('Review hunk by hunk (%d hunk%s)…'):format(n, n == 1 and '' or 's')
end

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
  local hunks = M.hunk_count(params)
  if hunks > 0 then
    table.insert(out, ('[%d] %s'):format(#(params.options or {}) + 1, review_label(hunks)))
  end
  if type(tc.diff) == 'table' and tc.diff.path then
    table.insert(out, '')
    vim.list_extend(out, require('openprogram.approvals').diff_lines(tc.diff))
  end
  return out, options_at
end

--- A question's choices: its options, "Type an answer…" when free text is allowed (or there
--- are no options), and "Decline to answer".
---@param params table askQuestion params
---@return {label: string, value?: any, free?: boolean}[]
function M.question_choices(params)
  local out = {}
  local options = params.options ~= vim.NIL and params.options or {}
  for _, o in ipairs(options) do
    table.insert(out, { label = tostring(o), value = tostring(o) })
  end
  if params.allowFreeText or #out == 0 then
    table.insert(out, { label = 'Type an answer…', free = true })
  end
  table.insert(out, { label = 'Decline to answer', value = false })
  return out
end

--- The lines a question's float shows, and where its choices start (1-based).
---@param params table askQuestion params
---@param choices {label: string}[]
---@return string[] lines
---@return integer options_at
function M.question_lines(params, choices)
  local out = vim.split(tostring(params.question or '?'), '\n', { plain = true })
  table.insert(out, '')
  local options_at = #out + 1
  for i, c in ipairs(choices) do
    table.insert(out, ('[%d] %s'):format(i, c.label))
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
  if r.review then
    r.review.close()
    r.review = nil
  end
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

--- Cut `text` to `width` display cells, from the right (the start of a title is what names it).
---@param text string
---@param width integer
---@return string
local function fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  return vim.fn.strcharpart(text, 0, math.max(1, width - 1)) .. '…'
end

---@param r openprogram.FloatRequest
local function open(r)
  local lines, options_at, labels, title
  if r.question then
    r.choices = r.choices or M.question_choices(r.params)
    lines, options_at = M.question_lines(r.params, r.choices)
    labels = vim.tbl_map(function(c)
      return c.label
    end, r.choices)
    title = 'Question: ' .. (vim.split(tostring(r.params.question or '?'), '\n', { plain = true })[1] or '?')
  else
    lines, options_at = M.lines(r.params)
    labels = vim.tbl_map(function(o)
      return o.name or o.optionId
    end, r.params.options or {})
    if M.hunk_count(r.params) > 0 then
      table.insert(labels, 'Review')
    end
    local tc = r.params.toolCall or {}
    title = 'Approval waiting: ' .. (tc.title or tc.name or '?')
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = r.question and 'markdown' or 'diff' -- the diff part is highlighted
  local cols, rows = vim.o.columns, vim.o.lines
  local width = math.min(math.max(50, math.floor(cols * 0.6)), cols - 4)
  local height = math.max(5, math.min(#lines, math.floor((rows - 6) / 2)))
  local waiting = #M.queue > 1 and (' · %d more waiting'):format(#M.queue - 1) or ''
  local n = #labels
  local footer = (' :OpenProgramApproval to answer · %s choose · q back '):format(
    n > 1 and ('1-%d'):format(n) or '1')
  -- keep clear of the line the user is typing on: the half of the screen without the cursor
  local cursor_row = vim.fn.screenrow()
  local top = cursor_row > rows / 2 and 1 or math.max(1, rows - height - 4)
  local win = vim.api.nvim_open_win(buf, false, {
    relative = 'editor', row = top, col = math.floor((cols - width) / 2), width = width,
    height = height, border = 'double', style = 'minimal',
    title = ' ' .. fit(title, width - 4 - #waiting) .. waiting .. ' ', title_pos = 'center',
    footer = fit(footer, width - 2), footer_pos = 'center',
    focusable = true, zindex = 60,
  })
  vim.wo[win].winhighlight = 'FloatBorder:DiagnosticWarn,FloatTitle:DiagnosticWarn'
  vim.wo[win].wrap = r.question == true
  vim.wo[win].cursorline = true
  -- every option keeps a share of the bar (the full names are the option lines below)
  local share = math.max(6, math.floor(width / math.max(1, n)) - 5)
  local bar = {}
  for i, l in ipairs(labels) do
    table.insert(bar, ('%d %s'):format(i, fit(l, share)))
  end
  vim.wo[win].winbar = (table.concat(bar, ' · '):gsub('%%', '%%%%'))
  for i = options_at, options_at + n - 1 do
    vim.api.nvim_buf_set_extmark(buf, ns, i - 1, 0, { line_hl_group = 'PmenuSel', end_col = 0 })
  end
  r.buf, r.win = buf, win
  local function back()
    if r.prev_win and vim.api.nvim_win_is_valid(r.prev_win) then
      vim.api.nvim_set_current_win(r.prev_win)
    end
  end
  local function choose(i)
    if not r.question then
      local options = r.params.options or {}
      if options[i] then
        settle(r, options[i])
      elseif i == #options + 1 and M.hunk_count(r.params) > 0 then
        M.review(r)
      end
      return
    end
    local c = r.choices[i]
    if not c then
      return
    end
    if not c.free then
      settle(r, c.value)
      return
    end
    -- free text: asked here, after the user moved into the float and chose to type
    vim.ui.input({ prompt = tostring(r.params.question or '?') .. ' ' }, function(text)
      if text and text ~= '' and r.win then
        settle(r, text)
      end
    end)
  end
  local function map(lhs, fn)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  for i = 1, math.min(n, 9) do
    map(tostring(i), function()
      choose(i)
    end)
  end
  map('<CR>', function()
    local row = vim.api.nvim_win_get_cursor(win)[1]
    choose(row - options_at + 1)
  end)
  map('q', back)
  map('<Esc>', back)
  vim.notify(('openprogram: %s (:OpenProgramApproval to answer)'):format(
    r.question and ('question waiting: ' .. tostring(r.params.question or '?')) or title),
    vim.log.levels.WARN)
end

show_next = function()
  local r = M.queue[1]
  if r and not (r.win and vim.api.nvim_win_is_valid(r.win)) then
    open(r)
  end
end

--- The option a hunk review answers with: the first of `kind` (allow_once, reject_once).
---@param params table
---@param kind string
---@return table?
local function option_of(params, kind)
  for _, o in ipairs(params.options or {}) do
    if o.kind == kind then
      return o
    end
  end
  return nil
end

--- Open the hunk review of request `r` (its decisions survive leaving and coming back).
---@param r openprogram.FloatRequest
function M.review(r)
  if r.review then
    pcall(vim.api.nvim_set_current_tabpage, r.review.tab)
    return
  end
  r.decisions = r.decisions or {}
  r.review = require('openprogram.hunk_review').open(r.params, r.decisions, function(accepted)
    r.review = nil
    if #accepted == 0 then -- nothing accepted: the edit is rejected
      local o = option_of(r.params, 'reject_once')
      settle(r, o or { withdrawn = 'no hunk accepted' })
      return
    end
    local o = option_of(r.params, 'allow_once')
    if o then
      settle(r, vim.tbl_extend('force', o, { acceptedHunks = accepted }))
    end
  end, function()
    r.review = nil
    if r.win and vim.api.nvim_win_is_valid(r.win) then
      vim.api.nvim_set_current_win(r.win)
    end
  end)
end

--- Move the cursor into the waiting approval (`:OpenProgramApproval`).
---@return boolean found
function M.focus()
  local r = showing()
  if not r then
    vim.notify('openprogram: no approval or question is waiting', vim.log.levels.INFO)
    return false
  end
  if r.review then -- its hunk review is open: go there
    pcall(vim.api.nvim_set_current_tabpage, r.review.tab)
    return true
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

--- Queue request `r` for the float; returns what settles it from outside (a withdrawal).
---@param r openprogram.FloatRequest
---@return fun(value: any)
local function enqueue(r)
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

--- Ask through the float; `resolve` gets the chosen option, or what a withdrawal passes.
---@param params table
---@param resolve fun(value: any)
---@return fun(value: any) settle_from_outside (withdrawal: closes the float)
function M.ask(params, resolve)
  return enqueue({ params = params, resolve = resolve })
end

--- Ask a question through the float; `resolve` gets the answer text, false (declined), or what
--- a withdrawal passes.
---@param params table askQuestion params
---@param resolve fun(value: any)
---@return fun(value: any) settle_from_outside
function M.ask_question(params, resolve)
  return enqueue({ params = params, resolve = resolve, question = true })
end

return M
