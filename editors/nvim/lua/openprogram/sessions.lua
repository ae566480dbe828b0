--[[
The session browser (`:OpenProgramSessions`, `gS` in the panel): a float listing this workspace's
sessions first, newest first, with the server's status and a preview of the last messages of
the session under the cursor. Sessions of other workspaces are behind `a`, each labelled with
its folder.

Keys: <CR> open · n new session · r rename · d delete (asks first; deletes its store) ·
a all workspaces / this one · R refresh · q or <Esc> close.
]]

local client = require('openprogram.client')
local protocol = require('openprogram.protocol')

local M = {}

---@class openprogram.Browser
---@field buf integer
---@field win integer
---@field preview_buf integer
---@field preview_win integer
---@field all boolean
---@field rows (table|false)[] line (1-based) -> session row (false: "+ New session")
---@field sessions table[]

---@type openprogram.Browser?
M.current = nil

--- Whether a session belongs to the workspace `root`.
---@param s table
---@param root string
---@return boolean
function M.in_workspace(s, root)
  local ws = s.workspace
  if type(ws) ~= 'string' or ws == '' then
    return true -- sessions from before workspaces were recorded: assume here
  end
  local norm = function(p)
    return (vim.fs.normalize(vim.fn.fnamemodify(p, ':p')):gsub('/$', ''))
  end
  return norm(ws) == norm(root)
end

--- Sessions in display order: this workspace's first (each group newest first).
---@param sessions table[]
---@param root string
---@param all boolean include other workspaces
---@return table[] mine, table[] others
function M.split(sessions, root, all)
  local mine, others = {}, {}
  for _, s in ipairs(sessions) do
    if M.in_workspace(s, root) then
      table.insert(mine, s)
    elseif all then
      table.insert(others, s)
    end
  end
  return mine, others
end

--- One line for a session.
---@param s table
---@param other? boolean label it with its workspace
---@return string
function M.format(s, other)
  local title = (type(s.title) == 'string' and s.title ~= '') and s.title or 'untitled'
  local when = tostring(s.updatedAt or ''):gsub('T', ' '):sub(1, 16)
  local status = tostring(s.status or 'idle')
  local mark = status == 'running' and '● ' or '  '
  local line = ('%s%s · %s · %s'):format(mark, title, status, when)
  if other then
    line = line .. ' · ' .. vim.fn.fnamemodify(tostring(s.workspace or '?'), ':~')
  end
  return line
end

---@param b openprogram.Browser
local function draw(b)
  local root = client.root()
  local mine, others = M.split(b.sessions, root, b.all)
  local lines, rows = { '+ New session' }, { false }
  for _, s in ipairs(mine) do
    table.insert(lines, M.format(s))
    table.insert(rows, s)
  end
  if b.all then
    if #others > 0 then
      table.insert(lines, '── other workspaces ──')
      table.insert(rows, false)
    end
    for _, s in ipairs(others) do
      table.insert(lines, M.format(s, true))
      table.insert(rows, s)
    end
  end
  rows[#lines + 1] = nil
  b.rows = rows
  vim.bo[b.buf].modifiable = true
  vim.api.nvim_buf_set_lines(b.buf, 0, -1, false, lines)
  vim.bo[b.buf].modifiable = false
  local hidden = #b.sessions - #mine - #others
  vim.api.nvim_win_set_config(b.win, {
    title = (' Sessions · %s%s '):format(b.all and 'all workspaces' or vim.fn.fnamemodify(root, ':~'),
      (not b.all and hidden > 0) and (' · a: +%d elsewhere'):format(hidden) or ''),
    title_pos = 'center',
  })
end

--- The session row under the cursor (nil on "+ New session" or a separator).
---@param b openprogram.Browser
---@return table?
local function at_cursor(b)
  local row = vim.api.nvim_win_get_cursor(b.win)[1]
  local s = b.rows[row]
  return s or nil
end

--- The last messages of a session, as preview lines.
---@param nodes table[]
---@return string[]
function M.preview_lines(nodes)
  local out = {}
  local shown = 0
  for i = #nodes, 1, -1 do
    local n = nodes[i]
    if (n.role == 'user' or n.role == 'assistant') and shown < 4 then
      shown = shown + 1
      local text = vim.split(vim.trim(tostring(n.text or '')), '\n', { plain = true })
      local body = {}
      for j = 1, math.min(#text, 4) do
        table.insert(body, '  ' .. text[j])
      end
      table.insert(body, 1, n.role == 'user' and 'You:' or 'Assistant:')
      out = vim.list_extend(body, out)
    end
  end
  return #out > 0 and out or { '(no messages yet)' }
end

---@param b openprogram.Browser
local function update_preview(b)
  local s = at_cursor(b)
  local function show(lines)
    if vim.api.nvim_buf_is_valid(b.preview_buf) then
      vim.bo[b.preview_buf].modifiable = true
      vim.api.nvim_buf_set_lines(b.preview_buf, 0, -1, false, lines)
      vim.bo[b.preview_buf].modifiable = false
    end
  end
  if not s then
    show({ 'Start a new conversation.' })
    return
  end
  client.request(protocol.methods.HISTORY, { sessionId = s.id }, function(err, result)
    if M.current ~= b or at_cursor(b) ~= s then
      return
    end
    show(err and { 'history failed: ' .. tostring(err.message) } or M.preview_lines((result or {}).nodes or {}))
  end)
end

--- Close the browser.
function M.close()
  local b = M.current
  M.current = nil
  if b then
    for _, w in ipairs({ b.win, b.preview_win }) do
      if vim.api.nvim_win_is_valid(w) then
        vim.api.nvim_win_close(w, true)
      end
    end
  end
end

---@param b openprogram.Browser
---@param done? fun()
local function reload(b, done)
  client.request(protocol.methods.SESSIONS, {}, function(err, result)
    if M.current ~= b then
      return
    end
    if err then
      vim.notify('openprogram: sessions failed: ' .. tostring(err.message), vim.log.levels.ERROR)
      return
    end
    b.sessions = (result or {}).sessions or {}
    draw(b)
    update_preview(b)
    if done then
      done()
    end
  end)
end

---@param b openprogram.Browser
---@param on_open? fun(session_id: string?)
local function open_choice(b, on_open)
  local s = at_cursor(b)
  local row = vim.api.nvim_win_get_cursor(b.win)[1]
  if not s and row ~= 1 then
    return -- a separator
  end
  M.close()
  local panel = require('openprogram.panel')
  panel.open(false)
  local sid = s and s.id or nil
  panel.set_session(sid, s and s.title ~= '' and s.title or nil, function()
    if on_open then
      on_open(sid)
    end
  end)
end

---@param b openprogram.Browser
local function rename(b)
  local s = at_cursor(b)
  if not s then
    return
  end
  require('openprogram.choose').input('rename', { prompt = 'Rename session: ', default = s.title or '' }, function(title)
    if not title or vim.trim(title) == '' then
      return
    end
    client.request(protocol.methods.RENAME_SESSION, { sessionId = s.id, title = title }, function(err)
      if err then
        vim.notify('openprogram: rename failed: ' .. tostring(err.message), vim.log.levels.ERROR)
        return
      end
      local panel = require('openprogram.panel')
      if panel.state.session_id == s.id then
        panel.state.title = vim.trim(title)
        panel.update_winbar()
      end
      reload(b)
    end)
  end)
end

---@param b openprogram.Browser
local function delete(b)
  local s = at_cursor(b)
  if not s then
    return
  end
  require('openprogram.choose').select({ 'Delete', 'Keep' }, {
    prompt = ('Delete session %q and its history?'):format(s.title ~= '' and s.title or s.id),
    kind = 'openprogram.confirm',
  }, function(choice)
    if choice ~= 'Delete' then
      return
    end
    client.request(protocol.methods.DELETE_SESSION, { sessionId = s.id }, function(err)
      if err then
        vim.notify('openprogram: delete failed: ' .. tostring(err.message), vim.log.levels.ERROR)
        return
      end
      local panel = require('openprogram.panel')
      if panel.state.session_id == s.id then
        panel.set_session(nil, nil)
      end
      reload(b)
    end)
  end)
end

--- Open the browser.
---@param opts? {all?: boolean, on_open?: fun(session_id: string?), on_ready?: fun(b: openprogram.Browser)}
function M.open(opts)
  opts = opts or {}
  M.close()
  local cols, lines = vim.o.columns, vim.o.lines
  local width = math.max(40, math.floor(cols * 0.7))
  local list_h = math.max(5, math.floor((lines - 4) * 0.45))
  local prev_h = math.max(3, math.floor((lines - 4) * 0.3))
  local row = math.max(0, math.floor((lines - list_h - prev_h - 4) / 2))
  local col = math.floor((cols - width) / 2)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'openprogram-sessions'
  local win = vim.api.nvim_open_win(buf, true, { relative = 'editor', row = row, col = col, width = width,
    height = list_h, border = 'rounded', title = ' Sessions ', title_pos = 'center',
    footer = ' <CR> open · n new · r rename · d delete · a all workspaces · q close ', footer_pos = 'center' })
  vim.wo[win].cursorline = true
  vim.wo[win].wrap = false
  local pbuf = vim.api.nvim_create_buf(false, true)
  vim.bo[pbuf].bufhidden = 'wipe'
  vim.bo[pbuf].filetype = 'markdown'
  local pwin = vim.api.nvim_open_win(pbuf, false, { relative = 'editor', row = row + list_h + 2, col = col,
    width = width, height = prev_h, border = 'rounded', title = ' Last messages ', title_pos = 'left',
    focusable = false })
  vim.wo[pwin].wrap = true
  ---@type openprogram.Browser
  local b = { buf = buf, win = win, preview_buf = pbuf, preview_win = pwin, all = opts.all == true, rows = {},
    sessions = {} }
  M.current = b
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = 'OpenProgram: ' .. desc })
  end
  map('<CR>', function()
    open_choice(b, opts.on_open)
  end, 'open the session')
  map('n', function()
    vim.api.nvim_win_set_cursor(b.win, { 1, 0 })
    open_choice(b, opts.on_open)
  end, 'new session')
  map('r', function()
    rename(b)
  end, 'rename the session')
  map('d', function()
    delete(b)
  end, 'delete the session')
  map('a', function()
    b.all = not b.all
    draw(b)
    update_preview(b)
  end, 'all workspaces')
  map('R', function()
    reload(b)
  end, 'refresh')
  map('q', M.close, 'close')
  map('<Esc>', M.close, 'close')
  vim.api.nvim_create_autocmd('CursorMoved', {
    buffer = buf,
    callback = function()
      update_preview(b)
    end,
  })
  vim.api.nvim_create_autocmd('BufLeave', {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if M.current == b and vim.api.nvim_get_current_win() ~= b.win then
          M.close()
        end
      end)
    end,
  })
  reload(b, function()
    if opts.on_ready then
      opts.on_ready(b)
    end
  end)
  return b
end

--- Exposed for tests and mappings: act on a browser row as the keys do.
M.actions = { rename = rename, delete = delete, open = open_choice, reload = reload, at_cursor = at_cursor }

return M
