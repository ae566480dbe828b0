--[[
Turns and live events: sends `openprogram/chat` / `openprogram/fork`, streams `text.delta` into
the panel, lists tool calls as they start and finish, notes checkpoints, questions, subagents
and messages between branches, and tracks `$/progress` for the panel's winbar. Redraws from
history when a turn ends.

Each request carries a fresh `clientTurnId`; the server echoes it in that turn's `turn.started`,
which is how the panel knows its turn (and, for a chat that creates a session, its session id)
before the result arrives. A `follow_up` turn (a subagent's outcome brought back after the
user's turn ended) that continues the branch on screen streams into the panel as well.
]]

local client = require('openprogram.client')
local panel = require('openprogram.panel')
local protocol = require('openprogram.protocol')
local render = require('openprogram.render')

local M = {}

local S = panel.state
local ev = protocol.events
local ns = panel.ns
local valid, edit = panel.valid, panel.edit
local append_lines, append_text, update_winbar = panel.append_lines, panel.append_text, panel.update_winbar

local seq = 0

--- A fresh `clientTurnId`, unique across Neovim processes sharing a server.
---@return string
function M.new_client_turn_id()
  seq = seq + 1
  local uv = vim.uv or vim.loop
  return ('nvim-%d-%x-%d'):format(vim.fn.getpid(), uv.hrtime(), seq)
end

--- Show the non-fatal problems of a successful turn (`TurnResult.warnings`).
---@param warnings any
local function show_warnings(warnings)
  if type(warnings) ~= 'table' then
    return
  end
  for _, w in ipairs(warnings) do
    local text = type(w) == 'table' and w.message or w
    vim.notify('openprogram: warning: ' .. tostring(text), vim.log.levels.WARN)
    panel.note('warning: ' .. tostring(text)) -- until the redraw shows it under the message
  end
end

-- Turns -------------------------------------------------------------------------------------

--- A turn the panel stopped showing (the user switched session while it ran) ended.
---@param result table? TurnResult
---@param err? lsp.ResponseError
---@param sid? string
local function background_done(result, err, sid)
  if sid then
    S.background[sid] = nil
  end
  local status = err and ('failed: ' .. tostring(err.message)) or tostring(result and result.status or 'done')
  vim.notify(('openprogram: the turn in session %s ended (%s)'):format(tostring(sid or '?'), status),
    vim.log.levels.INFO)
  if sid and sid == S.session_id and not S.busy then
    S.watching, S.turn_id = false, nil
    panel.refresh()
  end
end

---@param result table? TurnResult
---@param err? lsp.ResponseError
local function turn_done(result, err)
  if type(result) == 'table' and type(result.usage) == 'table' then
    S.usage = result.usage
  end
  S.busy, S.request, S.progress, S.turn_id = false, nil, nil, nil
  S.awaiting_session, S.client_turn_id, S.watching = false, nil, false
  if err then
    panel.note('error: ' .. (err.message or vim.inspect(err)))
    update_winbar()
    vim.api.nvim_exec_autocmds('User', { pattern = 'OpenProgramTurnDone', modeline = false, data = { error = err } })
    return
  end
  if type(result) == 'table' then
    if result.sessionId and (S.session_id == nil or S.session_id == S.turn_session) then
      S.session_id = result.sessionId -- unless the user switched sessions meanwhile
    end
    if result.sessionId == S.session_id and type(result.headId) == 'string' then
      S.head_id = result.headId
    end
    if result.status == 'error' and type(result.error) == 'table' then
      panel.note('turn failed: ' .. tostring(result.error.message))
    end
    show_warnings(result.warnings)
  end
  update_winbar()
  if S.session_id and (S.new_session or not S.title) then
    S.new_session = false
    local sid = S.session_id
    client.request(protocol.methods.SESSIONS, {}, function(e, res)
      for _, sess in ipairs((not e and res and res.sessions) or {}) do
        if sess.id == sid and sid == S.session_id and type(sess.title) == 'string' then
          S.title = sess.title
          update_winbar()
        end
      end
    end)
  end
  panel.refresh(function()
    vim.api.nvim_exec_autocmds('User', { pattern = 'OpenProgramTurnDone', modeline = false, data = result })
  end)
end

---@param header_text string
---@param label? string header of the message (default 'You')
---@param own? boolean the user just sent it: show it even when they had scrolled up to read
local function begin_stream(header_text, label, own)
  S.stream_gen = S.stream_gen + 1
  panel.open(false)
  if #S.nodes == 0 and not S.session_id then
    -- Only the intro is showing: the new conversation replaces it.
    edit(function(buf)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    end)
  end
  local lines = { '', '## ' .. (label or 'You') }
  vim.list_extend(lines, vim.split(header_text, '\n', { plain = true }))
  vim.list_extend(lines, { '', '## Assistant', '' })
  append_lines(lines)
  S.tools, S.tool_meta, S.thinking, S.live_thoughts = {}, {}, nil, {}
  -- The user's own message is shown even when they had scrolled up to read; anything else
  -- (a follow-up turn, streamed text, notes) moves only a panel whose cursor was at the end.
  if own and valid(S.buf) then
    local n = vim.api.nvim_buf_line_count(S.buf)
    for _, w in ipairs(vim.fn.win_findbuf(S.buf)) do
      pcall(vim.api.nvim_win_set_cursor, w, { n, 0 })
    end
  end
end

--- Send a message on the current session (a new session if none is shown).
---@param text string
---@param extra? table more openprogram/chat params (e.g. branchFrom, model)
function M.send(text, extra)
  if (S.busy or S.watching) and S.turn_session ~= nil and S.turn_session ~= S.session_id then
    -- The running turn belongs to a session no longer on screen: let it run on its own.
    M.detach()
  end
  if S.busy or S.watching then
    -- A running turn: the message interjects instead of queueing a second turn.
    client.request(protocol.methods.STEER, { sessionId = S.session_id, text = text }, function(err, res)
      panel.note((not err and res and res.accepted) and ('steered: ' .. text) or 'could not steer the running turn')
    end)
    return
  end
  if not client.ensure() then
    panel.open(false)
    panel.note('the openprogram server is not running (see :checkhealth openprogram)')
    return
  end
  local attach = require('openprogram.attach')
  local context = attach.take(text)
  local header = text
  if #context > 0 then
    header = table.concat(vim.tbl_map(attach.label, context), ' ') .. '\n' .. text
  end
  begin_stream(header, nil, true)
  S.client_turn_id = M.new_client_turn_id()
  local params = vim.tbl_extend('force', { text = text, sessionId = S.session_id, clientTurnId = S.client_turn_id,
    model = require('openprogram.pickers').chosen, context = #context > 0 and context or nil }, extra or {})
  S.busy, S.awaiting_session = true, S.session_id == nil
  S.turn_session = S.session_id
  if S.awaiting_session then
    S.new_session = true
    S.title = vim.split(vim.trim(text), '\n', { plain = true })[1] -- the server titles it so too
  end
  update_winbar()
  S.turn_gen = S.turn_gen + 1
  local gen = S.turn_gen
  local id, c = client.request(protocol.methods.CHAT, params, function(err, result)
    if gen ~= S.turn_gen then
      background_done(result, err, result and result.sessionId or params.sessionId)
      return
    end
    turn_done(result, err)
  end)
  if not id then
    S.busy, S.awaiting_session, S.client_turn_id = false, false, nil
    panel.note('the openprogram server is not running (see :checkhealth openprogram)')
    return
  end
  S.request = { client = c, id = id }
end

--- Fork from a node with a new message; the panel then shows the new branch.
---@param from_node_id string|false|nil the message to continue after; false/nil/vim.NIL: a new root
---@param text string
---@param name? string
---@param restore_code? boolean start from the code the conversation had at that message
function M.fork(from_node_id, text, name, restore_code)
  if S.busy or S.watching then
    vim.notify('openprogram: a turn is running; cancel it first', vim.log.levels.WARN)
    return
  end
  if not client.ensure() then
    panel.note('the openprogram server is not running (see :checkhealth openprogram)')
    return
  end
  begin_stream(text, nil, true)
  S.busy = true
  S.turn_session = S.session_id
  S.client_turn_id = M.new_client_turn_id()
  update_winbar()
  local from = from_node_id
  if not from then
    from = vim.NIL -- JSON null: a new root in the same session
  end
  S.turn_gen = S.turn_gen + 1
  local gen = S.turn_gen
  local sid = S.session_id
  local id, c = client.request(
    protocol.methods.FORK,
    { sessionId = S.session_id, fromNodeId = from, text = text, name = name, clientTurnId = S.client_turn_id,
      restoreCode = restore_code or nil, model = require('openprogram.pickers').chosen },
    function(err, result)
      if result and result.codeRestore then
        require('openprogram.code').switched(sid, result.codeRestore, nil)
      end
      if gen ~= S.turn_gen then
        background_done(result, err, sid)
        return
      end
      turn_done(result, err)
    end
  )
  if not id then
    S.busy, S.client_turn_id = false, nil
    return
  end
  S.request = { client = c, id = id }
end

--- Stop showing the running turn (the user moved to another session); it runs on, and a
--- notification says when it ends. Coming back to its session streams it again.
function M.detach()
  if S.turn_session and (S.busy or S.watching) then
    S.background[S.turn_session] = S.turn_id or true
  end
  S.turn_gen = S.turn_gen + 1
  S.busy, S.watching, S.request, S.turn_id, S.progress = false, false, nil, nil, nil
  S.awaiting_session, S.client_turn_id, S.turn_session = false, nil, nil
  update_winbar()
end

--- Cancel the running turn.
function M.cancel()
  if not S.busy and not S.watching then
    vim.notify('openprogram: no turn is running', vim.log.levels.INFO)
    return
  end
  if S.session_id then
    client.request(protocol.methods.CANCEL, { sessionId = S.session_id }, function() end)
  elseif S.request then
    client.cancel_request(S.request.client, S.request.id)
  end
  panel.note('cancelling…')
end

--- The server went away: end the running turn in the panel instead of waiting forever.
---@param code integer
---@param signal integer
---@param client_id integer
function M.on_server_exit(code, signal, client_id)
  if S.request and S.request.client.id ~= client_id then
    return -- another workspace's server
  end
  if S.busy then
    turn_done(nil, { code = -32603, message = ('the server exited (code %d, signal %d)'):format(code, signal) })
  elseif S.watching then
    S.watching, S.turn_id = false, nil
    panel.note('the server exited')
    update_winbar()
  end
  require('openprogram.async').withdraw_all()
end

-- Events ------------------------------------------------------------------------------------

---@param data table
--- A piece of the model's reasoning: one collapsed line per thought, updated as it grows; the
--- text is kept for `gT` (panel.show_thoughts).
---@param text string
local function on_thought(text)
  if not valid(S.buf) then
    return
  end
  local render = require('openprogram.render')
  if not S.thinking then
    append_lines({ '', render.thought_line(text, true) })
    S.thinking = { line = vim.api.nvim_buf_line_count(S.buf) - 1, text = '' }
    table.insert(S.live_thoughts, '')
  end
  S.thinking.text = S.thinking.text .. text
  S.live_thoughts[#S.live_thoughts] = S.thinking.text
  local line = S.thinking.line
  panel.edit(function(buf)
    vim.api.nvim_buf_set_lines(buf, line, line + 1, false, { render.thought_line(S.thinking.text, true) })
  end)
end

--- The streaming thought is whole: its line says so.
local function end_thought()
  local th = S.thinking
  S.thinking = nil
  if th and valid(S.buf) then
    panel.edit(function(buf)
      vim.api.nvim_buf_set_lines(buf, th.line, th.line + 1, false,
        { require('openprogram.render').thought_line(th.text) })
    end)
  end
end

local function on_tool_started(data)
  if not valid(S.buf) then
    return
  end
  local title = data.title or data.name or 'tool'
  append_lines(S.streaming_text and { '', panel.tool_line(title, data.kind, 'in_progress') }
    or { panel.tool_line(title, data.kind, 'in_progress') })
  local row = vim.api.nvim_buf_line_count(S.buf) - 1
  local key = data.toolCallId or title
  S.tools[key] = vim.api.nvim_buf_set_extmark(S.buf, ns, row, 0, {})
  S.tool_meta[key] = { title = title, kind = data.kind }
end

---@param data table
local function on_tool_finished(data)
  local mark = data.toolCallId and S.tools[data.toolCallId]
  local meta = S.tool_meta[data.toolCallId or ''] or {}
  local status = data.cancelled == true and 'cancelled' or data.status or 'completed'
  -- its output folds open under its line (a failure's first lines shown); todo_write's is the
  -- checklist plan.updated draws
  local suffix, out = '', {}
  if data.blockedReason == nil and status ~= 'cancelled' and data.name ~= 'todo_write' then
    suffix, out = render.tool_output(data.output, status)
  end
  if mark and valid(S.buf) then
    local pos = vim.api.nvim_buf_get_extmark_by_id(S.buf, ns, mark, {})
    if pos and pos[1] then
      edit(function(buf)
        vim.api.nvim_buf_set_lines(buf, pos[1], pos[1] + 1, false, {
          panel.tool_line(meta.title or data.name or 'tool', meta.kind or data.kind, status)
            .. render.blocked_suffix(data.blockedReason) .. suffix,
        })
        vim.api.nvim_buf_set_lines(buf, pos[1] + 1, pos[1] + 1, false, out)
      end)
      if S.thinking and S.thinking.line > pos[1] then
        S.thinking.line = S.thinking.line + #out -- a thought streaming below moved down
      end
    end
  elseif valid(S.buf) then
    append_lines({ panel.tool_line(data.title or data.name or 'tool', data.kind, status)
      .. render.blocked_suffix(data.blockedReason) .. suffix })
    if #out > 0 then
      append_lines(out)
    end
  end
end

---@param data table
---@return string
local function agent_name(data)
  local label = data.label
  if type(label) ~= 'string' or label == '' then
    label = nil
  end
  return tostring(label or data.agentId or data.id or '?')
end

--- A note for the subagent and branch-message events (their data is informational).
---@param t string
---@param data table
---@return string?
local function collab_note(t, data)
  if t == ev.SUBAGENT_STARTED then
    local what = data.kind == 'message' and 'delivering a message on' or 'subagent'
    return ('%s %s started'):format(what, agent_name(data))
  elseif t == ev.SUBAGENT_ENDED then
    local err = type(data.error) == 'string' and (': ' .. data.error) or ''
    return ('subagent %s %s%s'):format(agent_name(data), tostring(data.status or 'ended'), err)
  elseif t == ev.BRANCH_MESSAGE_SENT then
    if data.kind == 'reply' then
      local how = data.inTurn and 'into the running turn' or 'as a follow-up turn'
      return ('%s reported back %s'):format(tostring(data.from or '?'), how)
    end
    local to = data.toLabel or data.to or '?'
    local preview = tostring(data.preview or data.message or ''):match('^[^\n]*') or ''
    return ('message to %s%s: %s'):format(tostring(to), data.queued and ' (queued)' or '', preview)
  end
  return nil
end

--- Close prompts the server gave up on, by the id the event names.
---@param t string
---@param params table
---@param data table
local function withdraw_prompts(t, params, data)
  local async = require('openprogram.async')
  if t == ev.PERMISSION_WITHDRAWN and type(data.toolCallId) == 'string' then
    async.withdraw_key(data.toolCallId, params.turnId, { withdrawn = data.reason or 'withdrawn' })
  elseif (t == ev.QUESTION_REJECTED or t == ev.QUESTION_REPLIED) and type(data.questionId) == 'string' then
    async.withdraw_key(data.questionId, params.turnId, { withdrawn = data.reason or 'answered elsewhere' })
  elseif t == ev.TURN_FINISHED and params.turnId then
    -- The turn is over (done, cancelled, failed): its open prompts can no longer matter.
    require('openprogram.questions').forget(function(e)
      return e.turnId == params.turnId
    end)
    if async.withdraw(params.turnId) > 0 then
      panel.note('a pending prompt was withdrawn: the turn ended')
    end
  end
end

--- A turn the panel did not request: stream it when it is a follow-up continuing the branch on
--- screen (a subagent's outcome brought back after the user's turn ended).
---@param params table
---@param data table
local function maybe_watch(params, data)
  -- another editor's turn in this session (over a shared `serve --tcp`): watch it live
  local elsewhere = data.source == 'user' and (data.clientTurnId == nil or data.clientTurnId ~= S.client_turn_id)
  if S.busy or S.turn_id or (data.source ~= 'follow_up' and not elsewhere) then
    return
  end
  local pred = data.predecessor ~= vim.NIL and data.predecessor or nil
  if S.head_id and pred and pred ~= S.head_id then
    panel.note('a follow-up turn runs on another branch (gB to see it)')
    return
  end
  S.turn_id, S.watching, S.turn_session = params.turnId, true, params.sessionId
  begin_stream(tostring(data.text or ''), elsewhere and 'You · in another editor' or 'Follow-up')
  update_winbar()
end

--- Draw one `openprogram/event` notification in the panel.
---@param params {type: string, sessionId?: string, turnId?: string, data?: table}
local function draw_event(params)
  local t, data = params.type, type(params.data) == 'table' and params.data or {}
  if t == ev.FILE_CHANGED then
    vim.schedule(function()
      local gone = {}
      for _, c in ipairs(type(data.changes) == 'table' and data.changes or {}) do
        if type(c) == 'table' and c.change == 'deleted' and type(c.path) == 'string' then
          table.insert(gone, c.path)
        end
      end
      require('openprogram.checkpoints').reload_buffers(gone, type(data.root) == 'string' and data.root or nil)
    end)
    return
  end
  withdraw_prompts(t, params, data)
  if t == ev.PERMISSION_WITHDRAWN then
    return -- approvals.lua notes it when its prompt closes
  end
  if t == ev.TURN_STARTED and S.busy and S.client_turn_id and data.clientTurnId == S.client_turn_id then
    -- Our request's turn: now we know its turn id, and the session a new chat created.
    if S.awaiting_session and params.sessionId then
      S.session_id, S.awaiting_session = params.sessionId, false
    end
    if params.sessionId == S.session_id then
      S.turn_id = params.turnId
    end
    S.turn_session = params.sessionId
    update_winbar()
  end
  if params.sessionId ~= S.session_id or S.session_id == nil then
    return
  end
  require('openprogram.watch').on_event(params)
  if t == ev.TURN_STARTED and params.turnId ~= S.turn_id then
    maybe_watch(params, data)
    return
  end
  if t == ev.TEXT_DELTA or t == ev.TOOL_STARTED or t == ev.TOOL_FINISHED or t == ev.PLAN_UPDATED
    or t == ev.THOUGHT_DELTA then
    if params.turnId == nil or params.turnId ~= S.turn_id then
      return -- another turn of the session (a subagent's, another client's)
    end
  end
  if t ~= ev.THOUGHT_DELTA and S.thinking then
    end_thought() -- text or a tool call: the thought before it is whole
  end
  if t == ev.THOUGHT_DELTA and type(data.text) == 'string' then
    on_thought(data.text)
  elseif t == ev.TEXT_DELTA and type(data.text) == 'string' then
    if not S.streaming_text and valid(S.buf) then
      local n = vim.api.nvim_buf_line_count(S.buf)
      if vim.api.nvim_buf_get_lines(S.buf, n - 1, n, false)[1] ~= '' then
        append_lines({ '', '' }) -- a paragraph break, then the line the text streams into
      end
    end
    append_text(data.text)
    S.streaming_text = true
  elseif t == ev.TOOL_STARTED then
    on_tool_started(data)
  elseif t == ev.TOOL_FINISHED then
    on_tool_finished(data)
  elseif t == ev.PLAN_UPDATED and valid(S.buf) then
    -- the to-do list as a checklist under its todo_write line (the history shows it there too)
    local lines = render.plan_lines(data.entries)
    if #lines > 0 then
      append_lines(lines)
    end
  elseif t == ev.CHECKPOINT_CREATED then
    local cp = data.checkpoint or data
    local n = type(cp.files) == 'table' and #cp.files or 0
    panel.note(('checkpoint %s · %d file%s · :OpenProgramCheckpoints'):format(
      require('openprogram.render').short_id(cp.id or '?'), n, n == 1 and '' or 's'))
  elseif t == ev.QUESTION_ASKED then
    require('openprogram.questions').note(vim.tbl_extend('force', data, { sessionId = params.sessionId }))
  elseif t == ev.QUESTION_REPLIED then
    panel.note('answer: ' .. tostring(data.answer or ''))
  elseif t == ev.QUESTION_REJECTED then
    panel.note(('question not answered (%s)'):format(tostring(data.reason or 'rejected')))
  elseif t == 'context.usage' then
    S.context = data
    update_winbar()
  elseif t == ev.CONTEXT_COMPACTED then
    panel.note('context compacted')
  elseif t == ev.SUBAGENT_STARTED or t == ev.SUBAGENT_ENDED or t == ev.BRANCH_MESSAGE_SENT then
    if t == ev.SUBAGENT_STARTED then
      S.agents_running[tostring(data.agentId or data.id or data.label or '?')] = true
    elseif t == ev.SUBAGENT_ENDED then
      S.agents_running[tostring(data.agentId or data.id or data.label or '?')] = nil
    end
    update_winbar()
    panel.note(collab_note(t, data) or t)
  elseif t == ev.TURN_FINISHED then
    if S.background[params.sessionId] then
      S.background[params.sessionId] = nil
    end
    if S.watching and params.turnId == S.turn_id then
      S.watching, S.turn_id = false, nil
      update_winbar()
      show_warnings(data.warnings)
      panel.refresh()
    elseif not S.busy and not S.watching then
      panel.refresh()
    end
  end
end

--- Route one `openprogram/event` notification to the panel, then fire `User OpenProgramEvent`
--- (after the panel has drawn it, so a handler sees the panel as of this event).
---@param params {type: string, sessionId?: string, turnId?: string, data?: table}
---@param ctx? lsp.HandlerContext
function M.on_event(params, ctx)
  local _ = ctx
  if type(params) ~= 'table' then
    return
  end
  if require('openprogram.watch').hold(params) then
    return -- a session being joined: drawn once its history is on screen
  end
  local ok, err = pcall(draw_event, params)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'OpenProgramEvent', modeline = false, data = params })
  if not ok then
    error(err, 0)
  end
end

--- Track `$/progress` of our clients for the panel's winbar (LspProgress autocmd).
function M.setup_progress()
  local group = vim.api.nvim_create_augroup('openprogram.progress', { clear = true })
  vim.api.nvim_create_autocmd('LspProgress', {
    group = group,
    callback = function(args)
      local data = args.data or {}
      local c = data.client_id and vim.lsp.get_client_by_id(data.client_id)
      if not c or c.name ~= client.name then
        return
      end
      local value = (data.params or {}).value or {}
      if value.kind == 'end' then
        S.progress = nil
      else
        local msg = value.message or value.title or ''
        if value.percentage then
          msg = ('%s (%d%%)'):format(msg, value.percentage)
        end
        S.progress = msg
      end
      update_winbar()
    end,
  })
end

return M
