--[[
Watching a live session another editor drives (`serve --tcp`, several editors on one server).

`:OpenProgramWatch [session]` subscribes (`openprogram/subscribe` with `replay`) and shows the
session in the panel; a turn that is running shows what it streamed so far (the server replays
it) and streams on, and turns another editor starts later stream too. Events of the session
that arrive before its history is drawn are held (`hold`) and drawn after it, in order. Approvals of those turns belong to the editor that started them: here they show as
read-only notes (`permission.requested` with `readOnly`) followed by their outcome
(`permission.resolved`). Every session the panel shows is subscribed to, so another editor's
turns in it are seen.
]]

local client = require('openprogram.client')
local panel = require('openprogram.panel')
local protocol = require('openprogram.protocol')

local M = {}

local ev = protocol.events
local S = panel.state

--- toolCallId -> title of the read-only approval cards shown in the panel.
---@type table<string, string>
M.cards = {}

local OUTCOMES = {
  allow_once = 'allowed once',
  allow_always = 'always allowed',
  reject_once = 'rejected',
  reject_always = 'always rejected',
}

--- How an approval ended, in words.
---@param data table permission.resolved data
---@return string
function M.outcome_text(data)
  if data.outcome == 'selected' then
    return OUTCOMES[data.kind] or OUTCOMES[data.optionId] or ('chose ' .. tostring(data.optionId))
  end
  local reason = type(data.reason) == 'string' and data.reason ~= '' and data.reason or 'dismissed'
  return 'not answered (' .. reason .. ')'
end

--- Show read-only approval cards and their outcome (events of the session on screen).
---@param params {type: string, sessionId?: string, turnId?: string, data?: table}
function M.on_event(params)
  local data = type(params.data) == 'table' and params.data or {}
  if params.type == ev.PERMISSION_REQUESTED and data.readOnly then
    local call = type(data.toolCall) == 'table' and data.toolCall or {}
    local title = tostring(call.title or call.name or 'a tool call')
    M.cards[tostring(call.toolCallId)] = title
    local diff = type(call.diff) == 'table' and call.diff or nil
    local extra = diff and (' · %d line(s)'):format(#vim.split(tostring(diff.newText or ''), '\n', { plain = true })) or ''
    panel.note(('approval asked in another editor (read-only here): %s%s'):format(title, extra))
  elseif params.type == ev.PERMISSION_RESOLVED then
    local title = M.cards[tostring(data.toolCallId)]
    if title then
      M.cards[tostring(data.toolCallId)] = nil
      panel.note(('%s: %s in the other editor'):format(title, M.outcome_text(data)))
    end
  end
end

--- Receive a session's events from now on (best effort; a server without it says so).
---@param sid? string
---@param done? fun(result: table?)
function M.follow(sid, done)
  if not sid or not client.find() then
    if done then
      done(nil)
    end
    return
  end
  client.request(protocol.methods.SUBSCRIBE, { sessionId = sid }, function(err, result)
    if done then
      done((not err) and result or nil)
    end
  end)
end

--- The session being joined and its events held until its history is drawn.
---@type {sid: string, events: table[]}?
M.pending = nil

--- Hold an event of the session being joined (true: held; `chat.on_event` draws it later).
---@param params table
---@return boolean
function M.hold(params)
  if M.pending and params.sessionId == M.pending.sid then
    table.insert(M.pending.events, params)
    return true
  end
  return false
end

--- Draw what was held for the session being joined, in order (replayed, then live).
local function release()
  local held = M.pending and M.pending.events or {}
  M.pending = nil
  local chat = require('openprogram.chat')
  for _, params in ipairs(held) do
    chat.on_event(params)
  end
end

---@param sid string
---@param title? string
local function watch_session(sid, title)
  if not client.find() then
    vim.notify('openprogram: cannot watch session ' .. sid, vim.log.levels.ERROR)
    return
  end
  local pending = { sid = sid, events = {} }
  M.pending = pending
  vim.defer_fn(function() -- no answer (the server went away): stop holding the session's events
    if M.pending == pending then
      release()
    end
  end, 15000)
  client.request(protocol.methods.SUBSCRIBE, { sessionId = sid, replay = true }, function(err, result)
    if err or not result then
      M.pending = nil
      vim.notify('openprogram: cannot watch session ' .. sid, vim.log.levels.ERROR)
      return
    end
    local running = result.runningTurnId
    -- the running turn's nodes come from the replay, not the history (no line twice)
    for _, params in ipairs(M.pending and M.pending.events or {}) do
      local data = type(params.data) == 'table' and params.data or {}
      if params.replayed and params.type == ev.TURN_STARTED and params.turnId == running then
        S.hidden = { [running] = true }
        if type(data.userNodeId) == 'string' then
          S.hidden[data.userNodeId] = true
        end
      end
    end
    panel.open(false)
    panel.set_session(sid, title, function()
      for _, params in ipairs(M.pending and M.pending.events or {}) do
        local data = type(params.data) == 'table' and params.data or {}
        if params.replayed and params.type == ev.TURN_STARTED and params.turnId == running then
          -- the head the turn continues, as the history would have it without the turn
          S.head_id = data.predecessor ~= vim.NIL and data.predecessor or S.head_id
        end
      end
      release()
      if type(running) == 'string' and not S.busy and not S.turn_id and sid == S.session_id then
        -- no replay (an older server): stream the rest of the turn from here
        S.turn_id, S.watching, S.turn_session = running, true, sid
        panel.note('watching the turn another editor is running')
        panel.update_winbar()
      end
      vim.api.nvim_exec_autocmds('User', { pattern = 'OpenProgramWatching', modeline = false, data = result })
    end)
  end)
end

--- Watch a session live: the given one, or one picked from the list (running ones first).
---@param sid? string
function M.watch(sid)
  if not client.ensure() then
    vim.notify('openprogram: the server is not running (see :checkhealth openprogram)', vim.log.levels.ERROR)
    return
  end
  if sid and sid ~= '' then
    return watch_session(sid)
  end
  client.request(protocol.methods.SESSIONS, {}, function(err, result)
    local list = (not err and result and result.sessions) or {}
    table.sort(list, function(a, b)
      local ra, rb = a.status == 'running', b.status == 'running'
      if ra ~= rb then
        return ra
      end
      return tostring(a.updatedAt or '') > tostring(b.updatedAt or '')
    end)
    if #list == 0 then
      vim.notify('openprogram: no sessions to watch', vim.log.levels.INFO)
      return
    end
    vim.ui.select(list, {
      prompt = 'Watch session',
      kind = 'openprogram.session',
      format_item = function(s)
        return ('%s%s'):format(s.status == 'running' and '● running · ' or '', s.title ~= '' and s.title or s.id)
      end,
    }, function(s)
      if s then
        watch_session(s.id, s.title ~= '' and s.title or nil)
      end
    end)
  end)
end

return M
