--[[
The chat panel: a side split holding a markdown buffer with the active branch's history (one
header per message) and a multi-line input buffer (input.lua) under it for the next message. `chat.lua` runs turns
and streams their events into it.

Buffer layout (rendered from `openprogram/history`, then appended to while a turn streams):
  ## You · 10:02
  write hello.txt
  ## Assistant · 10:02
  Writing the file now.
  - ✓ Write hello.txt · edit · completed
]]

local client = require('openprogram.client')
local protocol = require('openprogram.protocol')

local M = {}

local ns = vim.api.nvim_create_namespace('openprogram.panel')
M.ns = ns

---@class openprogram.PanelNode
---@field line integer 0-based line of the node's header
---@field id string node id
---@field role string
---@field predecessor? string the node's predecessor (where an edit of a user message forks)

---@class openprogram.PanelState
---@field buf? integer markdown buffer
---@field input_buf? integer input buffer (input.lua)
---@field session_id? string session shown in the panel
---@field awaiting_session boolean a chat without sessionId is running: take the session of its turn.started
---@field busy boolean a chat or fork request is pending
---@field client_turn_id? string the clientTurnId of the pending request (echoed in its turn.started)
---@field watching boolean streaming a turn the panel did not request (a follow-up turn)
---@field head_id? string the last message of the branch on screen
---@field stream_gen integer counts streams begun (a redraw asked for before one began is dropped)
---@field turn_id? string the running turn the panel streams (from its turn.started)
---@field hidden? table<string, boolean> node ids the next history render leaves out (a turn replayed)
---@field turn_session? string the session the running turn was sent on
---@field request? {client: vim.lsp.Client, id: integer}
---@field nodes openprogram.PanelNode[] header lines of the last render
---@field tools table<string, integer> toolCallId -> extmark id
---@field tool_meta table<string, {title: string, kind?: string}> toolCallId -> how it was shown
---@field streaming_text boolean the last line of the buffer is reply text being streamed
---@field thinking? {line: integer, text: string} the thought streaming into its collapsed line
---@field live_thoughts string[] the streaming turn's thoughts so far (gT before history has them)
---@field progress? string latest $/progress message of our client
---@field title? string session title for the winbar
---@field new_session? boolean the running turn started a session (fetch its title when done)
---@field turn_gen integer counts turns the panel sent or let go (a stale callback is ignored)
---@field background table<string, string|true> session id -> its turn that runs off screen
---@field agents_running table<string, boolean> subagents of the session on screen still running
---@field usage? {inputTokens?: integer, outputTokens?: integer} the last turn's token usage
---@field context? {usedTokens?: integer, windowTokens?: integer} the last context.usage event
---@field loaded? table[] the history nodes drawn (the pages fetched so far, root first)
---@field has_more? boolean older history nodes remain on the server
---@field loading_older? boolean a request for the page before the first node is out
---@field branch? string the active branch as the winbar names it (M.branch_label)
local S = {
  turn_gen = 0,
  background = {},
  agents_running = {},
  awaiting_session = false,
  busy = false,
  watching = false,
  stream_gen = 0,
  nodes = {},
  tools = {},
  tool_meta = {},
  streaming_text = false,
  live_thoughts = {},
}
M.state = S

-- Buffer helpers ----------------------------------------------------------------------------

---@return boolean
local function valid(buf)
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf)
end

---@param fn fun(buf: integer)
local function edit(fn)
  local buf = S.buf
  if not valid(buf) then
    return
  end
  ---@cast buf integer
  -- Follow the tail in every window whose cursor sits on the last line.
  local last = vim.api.nvim_buf_line_count(buf)
  local following = {}
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.api.nvim_win_get_cursor(w)[1] >= last then
      table.insert(following, w)
    end
  end
  vim.bo[buf].modifiable = true
  fn(buf)
  -- A picker of ours open from the panel restores its cursor row when it calls back
  -- (dressing throws when that row is gone): a redraw keeps at least that many lines.
  local floor = require('openprogram.choose').min_lines(buf)
  local have = vim.api.nvim_buf_line_count(buf)
  if have < floor then
    local pad = {}
    for i = 1, floor - have do
      pad[i] = ''
    end
    vim.api.nvim_buf_set_lines(buf, have, have, false, pad)
  end
  vim.bo[buf].modifiable = false
  local n = vim.api.nvim_buf_line_count(buf)
  for _, w in ipairs(following) do
    pcall(vim.api.nvim_win_set_cursor, w, { n, 0 })
  end
end

--- Append whole lines at the end of the panel buffer.
---@param lines string[]
local quote_ns = vim.api.nvim_create_namespace('openprogram.quotes')

--- The panel's quoted lines (notes, warnings, checkpoints, steering) in italics, whatever
--- they contain: as markdown `> _…_` an underscore or a backtick inside the note (a file name,
--- a tool name) ended the emphasis early and left raw underscores on screen.
function M.note_highlight()
  local comment = vim.api.nvim_get_hl(0, { name = 'Comment', link = false })
  vim.api.nvim_set_hl(0, 'OpenProgramNote', { default = true, italic = true, fg = comment.fg, ctermfg = comment.ctermfg })
end

---@param buf integer
---@param from integer first line (0-based)
---@param to integer past the last line
local function mark_quotes(buf, from, to)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, from, to, false)) do
    if line:sub(1, 1) == '>' then
      vim.api.nvim_buf_set_extmark(buf, quote_ns, from + i - 1, 0, {
        end_col = #line, hl_group = 'OpenProgramNote', priority = 150,
      })
    end
  end
end

local function append_lines(lines)
  S.streaming_text = false
  edit(function(buf)
    local n = vim.api.nvim_buf_line_count(buf)
    local only = n == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ''
    vim.api.nvim_buf_set_lines(buf, only and 0 or n, -1, false, lines)
    mark_quotes(buf, only and 0 or n, -1)
  end)
end

--- Append streamed text to the last line (splitting on newlines).
---@param text string
local function append_text(text)
  edit(function(buf)
    local n = vim.api.nvim_buf_line_count(buf)
    local cur = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or ''
    local parts = vim.split(text, '\n', { plain = true })
    parts[1] = cur .. parts[1]
    vim.api.nvim_buf_set_lines(buf, n - 1, n, false, parts)
  end)
end

-- Windows -----------------------------------------------------------------------------------

local tokens = require('openprogram.render').tokens

local function winbar()
  local parts = { 'OpenProgram' }
  if S.title then
    table.insert(parts, S.title)
  elseif S.session_id then
    table.insert(parts, 'session ' .. S.session_id)
  end
  if S.branch and S.session_id then
    table.insert(parts, 'branch ' .. S.branch)
  end
  if require('openprogram.client').starting() then
    table.insert(parts, 'starting…')
  elseif S.busy then
    table.insert(parts, S.progress or 'working…')
  elseif S.watching then
    table.insert(parts, S.progress or 'follow-up…')
  end
  local agents = vim.tbl_count(S.agents_running)
  if agents > 0 then
    table.insert(parts, ('%d subagent%s running'):format(agents, agents == 1 and '' or 's'))
  end
  table.insert(parts, 'mode ' .. require('openprogram.pickers').mode())
  local ctx = S.context
  if type(ctx) == 'table' and tonumber(ctx.windowTokens) and tonumber(ctx.windowTokens) > 0 then
    table.insert(parts, ('ctx %d%%'):format(math.floor(100 * (tonumber(ctx.usedTokens) or 0) / ctx.windowTokens + 0.5)))
  end
  if type(S.usage) == 'table' then
    table.insert(parts, ('↑%s ↓%s'):format(tokens(S.usage.inputTokens), tokens(S.usage.outputTokens)))
  end
  local text = table.concat(parts, ' · '):gsub('%%', '%%%%')
  return text
end

local function update_winbar()
  if not valid(S.buf) then
    return
  end
  for _, w in ipairs(vim.fn.win_findbuf(S.buf)) do
    pcall(function()
      vim.wo[w].winbar = winbar()
    end)
  end
end

local function map(buf, lhs, rhs, desc)
  vim.keymap.set('n', lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = 'OpenProgram: ' .. desc })
end

local function create_buffers()
  if not valid(S.buf) then
    local buf = vim.api.nvim_create_buf(false, true)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = 'markdown'
    pcall(vim.api.nvim_buf_set_name, buf, 'openprogram://panel')
    vim.bo[buf].modifiable = false
    S.buf = buf
    map(buf, 'i', M.focus_input, 'type a message')
    map(buf, 'a', M.focus_input, 'type a message')
    map(buf, 'q', M.close, 'close the panel')
    map(buf, '<C-c>', function()
      require('openprogram.chat').cancel()
    end, 'cancel the turn')
    map(buf, 'gR', M.refresh, 'redraw from history')
    map(buf, '<CR>', function()
      M.toggle_output()
    end, "open or close the tool's output under the cursor")
    map(buf, 'za', function()
      if not M.toggle_output() then
        pcall(vim.cmd, 'normal! za')
      end
    end, "open or close the tool's output under the cursor")
    map(buf, 'gT', function()
      M.show_thoughts()
    end, "read the model's thoughts of the message under the cursor")
    map(buf, 'ga', function()
      require('openprogram.approval_float').focus()
    end, 'answer the waiting approval')
    map(buf, 'gF', function()
      require('openprogram.branches').fork()
    end, 'fork from the message under the cursor')
    map(buf, 'gB', function()
      require('openprogram.branches').pick_branch()
    end, 'switch branch')
    map(buf, 'gS', function()
      require('openprogram').sessions()
    end, 'browse sessions')
    vim.api.nvim_create_autocmd('CursorMoved', {
      buffer = buf,
      desc = 'openprogram: load older messages at the top of the panel',
      callback = function()
        local win = vim.api.nvim_get_current_win()
        if vim.api.nvim_win_get_cursor(win)[1] == 1 and S.has_more then
          M.load_older()
        end
      end,
    })
    M.render_intro()
  end
  if not valid(S.input_buf) then
    S.input_buf = require('openprogram.input').create(M.close)
  end
end

--- The window of the current tab page showing `buf` (each tab page has its own panel).
---@param buf? integer
---@return integer? win
local function tab_win(buf)
  if not valid(buf) then
    return nil
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
  return nil
end

---@return integer? win
local function panel_win()
  return tab_win(S.buf)
end

--- The input window of the current tab page's panel.
---@return integer? win
function M.input_win()
  return tab_win(S.input_buf)
end

--- Columns or lines for a size option: a fraction (0 < n <= 1) of `total`, or a count.
---@param n number
---@param total integer
---@param min integer
---@return integer
function M.size(n, total, min)
  local v = n <= 1 and math.floor(total * n + 0.5) or math.floor(n)
  return math.max(min, math.min(v, total - 2))
end

---@param win integer
local function style(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.foldenable = false
end

--- Fold level of a panel line: a tool's output lines fold under the tool's line.
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  local line = vim.fn.getline(lnum)
  return vim.startswith(line, require('openprogram.render').OUTPUT) and '1' or '0'
end

--- What a closed output fold shows.
---@return string
function M.foldtext()
  local n = vim.v.foldend - vim.v.foldstart + 1
  return ('    ▸ %d line%s of output (za or <CR> opens)'):format(n, n == 1 and '' or 's')
end

--- The log window folds tool output (closed until opened with za / <CR> on the call's line).
---@param win integer
local function fold_output(win)
  local wo = vim.wo[win]
  wo.foldmethod = 'expr'
  wo.foldexpr = "v:lua.require'openprogram.panel'.foldexpr(v:lnum)"
  wo.foldtext = "v:lua.require'openprogram.panel'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
end

--- <CR> / za on a tool's line: open or close the output folded under it.
local function toggle_output()
  local win = vim.api.nvim_get_current_win()
  local row = vim.api.nvim_win_get_cursor(win)[1]
  local render = require('openprogram.render')
  local target = row
  local cur = vim.fn.getline(row)
  if not vim.startswith(cur, render.OUTPUT) then
    -- on the call's line (or its shown failure lines): the fold below
    local r = row + 1
    while vim.startswith(vim.fn.getline(r), render.OUTPUT_SHOWN) do
      r = r + 1
    end
    if not vim.startswith(vim.fn.getline(r), render.OUTPUT) then
      return false
    end
    target = r
  end
  if vim.fn.foldclosed(target) ~= -1 then
    vim.cmd(target .. 'foldopen')
  else
    vim.cmd(target .. 'foldclose')
  end
  return true
end
M.toggle_output = toggle_output

--- The panel's window layout from the options: `{kind = 'split'|'float', ...}`.
---@return table
local function geometry()
  local opts = require('openprogram.config').options.panel
  local pos = opts.position
  local ih = opts.input_height or 3
  if pos == 'float' then
    local w = M.size(opts.width, vim.o.columns, 30)
    local h = M.size(opts.height or 0.8, vim.o.lines - 2, 8)
    return { kind = 'float', width = w, height = h - ih - 2, input_height = ih,
      row = math.max(0, math.floor((vim.o.lines - h) / 2) - 1), col = math.floor((vim.o.columns - w) / 2) }
  elseif pos == 'bottom' then
    return { kind = 'split', cmd = ('botright %dsplit'):format(M.size(opts.height or 0.35, vim.o.lines, 6)),
      input_height = ih, vertical = false }
  end
  local side = pos == 'left' and 'topleft' or 'botright'
  return { kind = 'split', cmd = ('%s vertical %dsplit'):format(side, M.size(opts.width, vim.o.columns, 20)),
    input_height = ih, vertical = true }
end

---@param g table geometry()
---@return integer panel window
local function open_windows(g)
  local win
  if g.kind == 'float' then
    win = vim.api.nvim_open_win(S.buf, true, { relative = 'editor', row = g.row, col = g.col,
      width = g.width, height = g.height, border = 'rounded', title = ' OpenProgram ', title_pos = 'center' })
    style(win)
    fold_output(win)
    vim.wo[win].conceallevel = 2
    local iw = vim.api.nvim_open_win(S.input_buf, false, { relative = 'editor', row = g.row + g.height + 2,
      col = g.col, width = g.width, height = g.input_height, border = 'rounded',
      title = ' Message · <CR> send · <C-j> new line · <C-c> cancel ', title_pos = 'left' })
    style(iw)
    return win
  end
  vim.cmd(g.cmd)
  win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, S.buf)
  style(win)
  fold_output(win)
  vim.wo[win].conceallevel = 2
  if g.vertical then
    vim.wo[win].winfixwidth = true
  else
    vim.wo[win].winfixheight = true
  end
  local n = vim.api.nvim_buf_line_count(S.buf)
  pcall(vim.api.nvim_win_set_cursor, win, { n, 0 })
  return win
end

--- Open (or focus) the panel; returns its window.
---@param focus? boolean move the cursor into the panel (default true)
---@return integer win
function M.open(focus)
  create_buffers()
  local win = panel_win()
  local prev = vim.api.nvim_get_current_win()
  local g = geometry()
  if not win then
    local orphan = tab_win(S.input_buf) -- an input left alone: reopen both in the same layout
    if orphan and #vim.api.nvim_tabpage_list_wins(0) > 1 then
      pcall(vim.api.nvim_win_close, orphan, false)
    end
    win = open_windows(g)
  end
  if not tab_win(S.input_buf) then
    if g.kind == 'float' then
      vim.api.nvim_win_close(win, true)
      win = open_windows(g)
    else
      vim.api.nvim_set_current_win(win)
      vim.cmd(('belowright %dsplit'):format(g.input_height))
      local iw = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(iw, S.input_buf)
      style(iw)
      vim.wo[iw].winfixheight = true
      vim.wo[iw].winbar = 'Message · <CR> send · <C-j> new line · <C-c> cancel'
    end
  end
  update_winbar()
  if focus == false and vim.api.nvim_win_is_valid(prev) then
    vim.api.nvim_set_current_win(prev)
  else
    vim.api.nvim_set_current_win(win)
  end
  return win
end

--- Whether the panel is on screen.
---@return boolean
function M.visible()
  return panel_win() ~= nil
end

--- Close the panel when it is open, else open it (focusing the input).
function M.toggle()
  if M.visible() then
    M.close()
  else
    M.focus_input()
  end
end

--- Close the panel's windows in the current tab page (the buffers, the session and the panels
--- of other tab pages stay).
function M.close()
  for _, b in ipairs({ S.input_buf, S.buf }) do
    local w = tab_win(b)
    if w then
      local float = vim.api.nvim_win_get_config(w).relative ~= ''
      if float or #vim.api.nvim_tabpage_list_wins(0) > 1 then
        pcall(vim.api.nvim_win_close, w, false)
      end
    end
  end
end

--- Log and input close together: `:q` (or any close) of one closes the other in its tab page.
---@param closed integer the window being closed
local function close_partner(closed)
  local ok, buf = pcall(vim.api.nvim_win_get_buf, closed)
  if not ok or (buf ~= S.buf and buf ~= S.input_buf) then
    return
  end
  local tab = vim.api.nvim_win_get_tabpage(closed)
  local partner = buf == S.buf and S.input_buf or S.buf
  vim.schedule(function()
    if not vim.api.nvim_tabpage_is_valid(tab) then
      return
    end
    local wins = vim.api.nvim_tabpage_list_wins(tab)
    for _, w in ipairs(wins) do
      if vim.api.nvim_win_get_buf(w) == partner then
        local float = vim.api.nvim_win_get_config(w).relative ~= ''
        if float or #wins > 1 then
          pcall(vim.api.nvim_win_close, w, false)
        end
      end
    end
  end)
end

--- Keep a side panel's width the configured fraction of the screen in every tab page.
local function follow_resize()
  local opts = require('openprogram.config').options.panel
  if opts.position == 'float' or opts.position == 'bottom' or not valid(S.buf) then
    return
  end
  local width = M.size(opts.width, vim.o.columns, 20)
  for _, w in ipairs(vim.fn.win_findbuf(S.buf)) do
    if vim.api.nvim_win_get_config(w).relative == '' then
      pcall(vim.api.nvim_win_set_width, w, width)
    end
  end
end

local group = vim.api.nvim_create_augroup('openprogram.panel', { clear = true })
vim.api.nvim_create_autocmd('WinClosed', {
  group = group,
  desc = 'openprogram: the panel log and input close together',
  callback = function(a)
    close_partner(tonumber(a.match) --[[@as integer]])
  end,
})
vim.api.nvim_create_autocmd('VimResized', {
  group = group,
  desc = 'openprogram: the panel width follows the screen',
  callback = follow_resize,
})

--- Move to the input line, in insert mode.
function M.focus_input()
  M.open(false)
  local iw = tab_win(S.input_buf)
  if iw then
    vim.api.nvim_set_current_win(iw)
    vim.cmd.startinsert({ bang = true })
  end
end

-- Rendering ---------------------------------------------------------------------------------

--- Show the intro (no session yet).
function M.render_intro()
  S.nodes, S.tools = {}, {}
  edit(function(buf)
    vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {
      '# OpenProgram',
      '',
      'Type a message in the input below and press Enter, or run `:OpenProgram {text}`.',
      'Keys here: `i` type, `<CR>`/`za` a tool call\'s output, `gF` fork at cursor, `gB` branches,',
      '`gS` sessions, `<C-c>` cancel, `q` close.',
    })
  end)
end

--- The line above the history while older messages are still on the server.
M.OLDER_LINE = '> Older messages: move to this line to load them'

--- Render a history (root -> head) into the panel, one header per message.
---@param nodes table[] Node list from openprogram/history (the pages loaded so far)
---@param has_more? boolean Older nodes remain on the server
function M.render(nodes, has_more)
  local hidden = S.hidden -- the nodes of a turn being replayed (watch.lua), once
  S.hidden = nil
  if hidden then
    nodes = vim.tbl_filter(function(n)
      return not hidden[n.id]
    end, nodes)
  end
  local lines, index = require('openprogram.render').history(nodes)
  S.loaded, S.has_more = nodes, has_more and #nodes > 0 or false
  if #lines == 0 then
    M.render_intro()
    return
  end
  if S.has_more then
    table.insert(lines, 1, M.OLDER_LINE)
    table.insert(lines, 2, '')
    for _, n in ipairs(index) do
      n.line = n.line + 2
    end
  end
  S.nodes, S.tools, S.tool_meta = index, {}, {}
  -- A question still waiting for an answer stays in sight (its note was part of the stream).
  vim.list_extend(lines, require('openprogram.questions').waiting_lines(S.session_id))
  edit(function(buf)
    vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    vim.api.nvim_buf_clear_namespace(buf, quote_ns, 0, -1)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    mark_quotes(buf, 0, -1)
  end)
  update_winbar()
end

--- Refetch the active branch of the current session and redraw.
---@param done? fun()
function M.refresh(done)
  if not S.session_id then
    if valid(S.buf) then
      M.render_intro()
    end
    if done then
      done()
    end
    return
  end
  local sid, gen = S.session_id, S.stream_gen
  local page = require('openprogram.config').options.history_page
  client.request(protocol.methods.HISTORY, { sessionId = sid, limit = page }, function(err, result)
    if gen ~= S.stream_gen then
      -- A turn began streaming meanwhile: drawing the older history would wipe it (that
      -- turn's end redraws).
      if done then
        done()
      end
      return
    end
    if not err and result and sid == S.session_id then
      create_buffers()
      if type(result.headId) == 'string' then
        S.head_id = result.headId
      end
      M.render(result.nodes or {}, result.hasMore == true)
      M.load_branch(sid)
    elseif err then
      M.note('history failed: ' .. (err.message or '?'))
    end
    if done then
      done()
    end
  end)
end

--- The winbar's name of the active branch among `branches` (openprogram/branches): its name,
--- else its place (`2/3`), else `main` for a session of one line.
---@param branches table[]
---@return string?
function M.branch_label(branches)
  for i, b in ipairs(branches) do
    if b.active then
      if type(b.name) == 'string' and b.name ~= '' then
        return b.name
      end
      return #branches > 1 and ('%d/%d'):format(i, #branches) or 'main'
    end
  end
  return nil
end

--- Ask which branch of session `sid` is active, for the winbar (async; stale answers dropped).
---@param sid string
function M.load_branch(sid)
  local protocol = require('openprogram.protocol')
  require('openprogram.client').request(protocol.methods.BRANCHES, { sessionId = sid }, function(err, result)
    if err or sid ~= S.session_id or type(result) ~= 'table' then
      return
    end
    S.branch = M.branch_label(result.branches or {})
    update_winbar()
  end)
end

--- Fetch the page of history before the oldest message shown and draw it above, keeping
--- the view on the message that was first.
---@param done? fun()
function M.load_older(done)
  local first = S.loaded and S.loaded[1]
  if S.loading_older or not S.has_more or not first or S.busy then
    if done then
      done()
    end
    return
  end
  S.loading_older = true
  local sid, gen, head = S.session_id, S.stream_gen, S.head_id
  local page = require('openprogram.config').options.history_page
  client.request(protocol.methods.HISTORY, { sessionId = sid, headId = head, limit = page, beforeNodeId = first.id },
    function(err, result)
      S.loading_older = false
      if not err and result and sid == S.session_id and gen == S.stream_gen and S.loaded[1] == first then
        local nodes = vim.list_extend(vim.list_extend({}, result.nodes or {}), S.loaded)
        M.render(nodes, result.hasMore == true)
        local win = panel_win()
        for _, n in ipairs(S.nodes) do
          if win and n.id == first.id then
            pcall(vim.api.nvim_win_set_cursor, win, { n.line + 1, 0 })
            break
          end
        end
      elseif err then
        M.note('history failed: ' .. (err.message or '?'))
      end
      if done then
        done()
      end
    end)
end

--- Show a session in the panel.
---@param session_id? string
---@param title? string
---@param done? fun()
function M.set_session(session_id, title, done)
  if (S.busy or S.watching) and S.turn_session ~= nil and S.turn_session ~= session_id then
    require('openprogram.chat').detach() -- it runs on; a notification says when it ends
  end
  S.session_id, S.title = session_id, title
  S.awaiting_session, S.head_id = false, nil
  S.agents_running, S.usage, S.context = {}, nil, nil
  if not S.busy then
    S.turn_id, S.watching = nil, false -- a follow-up streaming in the old session
    local running = session_id and S.background[session_id]
    if type(running) == 'string' then
      -- back on a session whose turn still runs: stream the rest of it
      S.turn_id, S.watching, S.turn_session = running, true, session_id
    end
  end
  update_winbar()
  require('openprogram.watch').follow(session_id) -- its turns from other editors show too
  M.refresh(done)
end

--- Append an italic note line (approvals, errors, checkpoints) if the panel exists.
---@param text string
function M.note(text)
  if not valid(S.buf) then
    return
  end
  append_lines({ '', ('> %s'):format((text:gsub('\n', ' '))), '' })
end

--- The id of the message whose section holds the cursor (panel window), if any.
---@param win? integer
---@return string? node_id
---@return string? role
---@return string? predecessor
function M.node_at_cursor(win)
  win = win or panel_win()
  if not win or not valid(S.buf) or vim.api.nvim_win_get_buf(win) ~= S.buf then
    return nil
  end
  local row = vim.api.nvim_win_get_cursor(win)[1] - 1
  local found ---@type openprogram.PanelNode?
  for _, n in ipairs(S.nodes) do
    if n.line <= row then
      found = n
    else
      break
    end
  end
  if found then
    return found.id, found.role, found.predecessor
  end
  return nil
end

--- The model's thoughts (collapsed in the panel) of the reply under the cursor, in a float; the
--- streaming turn's when the cursor is past the last message drawn from history.
---@return integer? win
function M.show_thoughts()
  local id, role = M.node_at_cursor()
  local parts = {} ---@type string[]
  local node ---@type table?
  for _, n in ipairs(S.loaded or {}) do
    if n.id == id then
      node = n
    end
  end
  if node and role == 'assistant' then
    local by_step = require('openprogram.render').thoughts_by_step(node)
    local steps = vim.tbl_keys(by_step)
    table.sort(steps)
    for _, k in ipairs(steps) do
      table.insert(parts, by_step[k])
    end
  end
  if #parts == 0 then
    parts = vim.tbl_filter(function(t)
      return t ~= ''
    end, S.live_thoughts)
  end
  if #parts == 0 then
    vim.notify('openprogram: no thoughts here', vim.log.levels.INFO)
    return nil
  end
  local lines = vim.split(table.concat(parts, '\n\n---\n\n'), '\n', { plain = true })
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable, vim.bo[buf].bufhidden, vim.bo[buf].filetype = false, 'wipe', 'markdown'
  local width = math.min(100, math.max(40, vim.o.columns - 10))
  local height = math.min(#lines + 1, math.max(5, vim.o.lines - 8))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor', width = width, height = height, style = 'minimal', border = 'rounded',
    row = math.floor((vim.o.lines - height) / 2), col = math.floor((vim.o.columns - width) / 2),
    title = ' Thoughts ', title_pos = 'center',
  })
  vim.wo[win].wrap = true
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, nowait = true, desc = 'close' })
  return win
end

-- For chat.lua, which streams into the panel.
M.tool_line = require('openprogram.render').tool_line
M.valid = valid
M.edit = edit
M.append_lines = append_lines
M.append_text = append_text
M.update_winbar = update_winbar
M.create_buffers = create_buffers

return M
