--[[
Turns and live events: sends `openprogram/chat` / `openprogram/fork`, streams `text.delta` into
the panel, lists tool calls as they start and finish, notes checkpoints and questions, and
tracks `$/progress` for the panel's winbar. Redraws from history when a turn ends.
]]

local client = require('openprogram.client')
local panel = require('openprogram.panel')
local protocol = require('openprogram.protocol')

local M = {}

local S = panel.state
local ev = protocol.events
local ns = panel.ns
local valid, edit = panel.valid, panel.edit
local append_lines, append_text, update_winbar = panel.append_lines, panel.append_text, panel.update_winbar

-- Turns -------------------------------------------------------------------------------------

---@param result table? TurnResult
---@param err? lsp.ResponseError
local function turn_done(result, err)
  S.busy, S.request, S.progress, S.turn_id = false, nil, nil, nil
  S.awaiting_session = false
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
    if result.status == 'error' and type(result.error) == 'table' then
      panel.note('turn failed: ' .. tostring(result.error.message))
    end
  end
  update_winbar()
  if S.session_id and (S.new_session or not S.title) then
    S.new_session = false
    local sid = S.session_id
    client.request(protocol.methods.SESSIONS, vim.empty_dict(), function(e, res)
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
local function begin_stream(header_text)
  panel.open(false)
  if #S.nodes == 0 and not S.session_id then
    -- Only the intro is showing: the new conversation replaces it.
    edit(function(buf)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    end)
  end
  local lines = { '', '## You' }
  vim.list_extend(lines, vim.split(header_text, '\n', { plain = true }))
  vim.list_extend(lines, { '', '## Assistant', '' })
  append_lines(lines)
  S.tools, S.tool_meta = {}, {}
end

--- Send a message on the current session (a new session if none is shown).
---@param text string
---@param extra? table more openprogram/chat params (e.g. branchFrom, model)
function M.send(text, extra)
  if S.busy then
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
  begin_stream(text)
  local params = vim.tbl_extend('force', { text = text, sessionId = S.session_id }, extra or {})
  S.busy, S.awaiting_session = true, S.session_id == nil
  S.turn_session = S.session_id
  if S.awaiting_session then
    S.new_session = true
    S.title = vim.split(vim.trim(text), '\n', { plain = true })[1] -- the server titles it so too
  end
  update_winbar()
  local id, c = client.request(protocol.methods.CHAT, params, function(err, result)
    turn_done(result, err)
  end)
  if not id then
    S.busy, S.awaiting_session = false, false
    panel.note('the openprogram server is not running (see :checkhealth openprogram)')
    return
  end
  S.request = { client = c, id = id }
end

--- Fork from a node with a new message; the panel then shows the new branch.
---@param from_node_id string
---@param text string
---@param name? string
function M.fork(from_node_id, text, name)
  if S.busy then
    vim.notify('openprogram: a turn is running; cancel it first', vim.log.levels.WARN)
    return
  end
  if not client.ensure() then
    panel.note('the openprogram server is not running (see :checkhealth openprogram)')
    return
  end
  begin_stream(text)
  S.busy = true
  S.turn_session = S.session_id
  update_winbar()
  local id, c = client.request(
    protocol.methods.FORK,
    { sessionId = S.session_id, fromNodeId = from_node_id, text = text, name = name },
    function(err, result)
      turn_done(result, err)
    end
  )
  if not id then
    S.busy = false
    return
  end
  S.request = { client = c, id = id }
end

--- Cancel the running turn.
function M.cancel()
  if not S.busy then
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
  end
  require('openprogram.async').withdraw_all()
end

-- Events ------------------------------------------------------------------------------------

---@param data table
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
  local status = data.status or 'completed'
  if mark and valid(S.buf) then
    local pos = vim.api.nvim_buf_get_extmark_by_id(S.buf, ns, mark, {})
    if pos and pos[1] then
      edit(function(buf)
        vim.api.nvim_buf_set_lines(buf, pos[1], pos[1] + 1, false, {
          panel.tool_line(meta.title or data.name or 'tool', meta.kind or data.kind, status),
        })
      end)
    end
  elseif valid(S.buf) then
    append_lines({ panel.tool_line(data.title or data.name or 'tool', data.kind, status) })
  end
end

--- Route one `openprogram/event` notification to the panel.
---@param params {type: string, sessionId?: string, turnId?: string, data?: table}
---@param ctx? lsp.HandlerContext
function M.on_event(params, ctx)
  local _ = ctx
  if type(params) ~= 'table' then
    return
  end
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'OpenProgramEvent', modeline = false, data = params })
  local t, data = params.type, type(params.data) == 'table' and params.data or {}
  if t == ev.FILE_CHANGED then
    vim.schedule(function()
      pcall(vim.cmd.checktime)
    end)
    return
  end
  if t == ev.TURN_FINISHED and params.turnId then
    -- The turn is over (done, cancelled, failed): its open prompts can no longer matter.
    if require('openprogram.async').withdraw(params.turnId) > 0 then
      panel.note('a pending prompt was withdrawn: the turn ended')
    end
  end
  if params.sessionId ~= S.session_id then
    if S.awaiting_session and t == ev.TURN_STARTED and params.sessionId then
      S.session_id, S.awaiting_session = params.sessionId, false
      update_winbar()
    else
      return
    end
  end
  if t == ev.TURN_STARTED and S.busy and not S.turn_id and (data.source or 'user') == 'user' then
    S.turn_id = params.turnId -- our turn; others (subagents) share the session but not the stream
  end
  local ours = S.turn_id == nil or params.turnId == nil or params.turnId == S.turn_id
  if not ours and (t == ev.TEXT_DELTA or t == ev.TOOL_STARTED or t == ev.TOOL_FINISHED) then
    return
  end
  if t == ev.TEXT_DELTA and type(data.text) == 'string' then
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
  elseif t == ev.CHECKPOINT_CREATED then
    local cp = data.checkpoint or data
    local n = type(cp.files) == 'table' and #cp.files or 0
    panel.note(('checkpoint %s · %d file%s · :OpenProgramCheckpoints'):format(
      tostring(cp.id or '?'), n, n == 1 and '' or 's'))
  elseif t == ev.QUESTION_ASKED then
    panel.note('question: ' .. tostring(data.question or '?'))
  elseif t == ev.QUESTION_REPLIED then
    panel.note('answer: ' .. tostring(data.answer or ''))
  elseif t == ev.QUESTION_REJECTED then
    panel.note('question not answered')
  elseif t == ev.CONTEXT_COMPACTED then
    panel.note('context compacted')
  elseif t == ev.SUBAGENT_STARTED then
    panel.note('subagent started: ' .. tostring(data.label or data.agentId or data.id or ''))
  elseif t == ev.SUBAGENT_ENDED then
    panel.note('subagent ended: ' .. tostring(data.label or data.agentId or data.id or ''))
  elseif t == ev.TURN_FINISHED and not S.busy then
    panel.refresh()
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
