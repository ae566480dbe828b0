--[[
Branches and sessions: fork from the message under the cursor, switch branch
(`openprogram/branches` + `openprogram/checkout`, with its code when the user says so: see
code.lua), switch session (`openprogram/sessions`).

Every choice goes through `vim.ui.select` / `vim.ui.input` (guarded by choose.lua), so picker
plugins apply (`opts.kind` is 'openprogram.branch' or 'openprogram.session'), and a picker left
open while the panel moved on (another session, a newer picker) does nothing when chosen in.
]]

local choose = require('openprogram.choose')
local client = require('openprogram.client')
local panel = require('openprogram.panel')
local protocol = require('openprogram.protocol')

local M = {}

---@param msg string
local function warn(msg)
  vim.notify('openprogram: ' .. msg, vim.log.levels.WARN)
end

--- Where a fork from a panel message continues: after an assistant message; in place of a user
--- message (from its predecessor, `false` when it is the first message: a new root, sent as
--- `fromNodeId: null`).
---@param node_id string
---@param role? string
---@param predecessor? string
---@return string|false
function M.fork_point(node_id, role, predecessor)
  if role == 'user' then
    return predecessor or false
  end
  return node_id
end

--- Fork from the message under the cursor in the panel (or `node_id`), asking for the text.
---@param node_id? string
---@param text? string
function M.fork(node_id, text)
  if not panel.state.session_id then
    warn('no session in the panel yet; send a message first')
    return
  end
  local from = node_id
  if not from then
    local id, role, pred = panel.node_at_cursor()
    if not id then
      warn('put the cursor on a message in the panel to fork from it')
      return
    end
    from = M.fork_point(id, role, pred)
  end
  local function go(input)
    -- `from` false: the first message of the session; the fork is a new root of the session
    -- (`openprogram/fork` with `fromNodeId: null`), with no code of its own to start from.
    if from == false then
      require('openprogram.chat').fork(from, input)
      return
    end
    require('openprogram.code').decide(function(restore)
      if restore ~= nil then
        require('openprogram.chat').fork(from, input, nil, restore)
      end
    end)
  end
  if text and text ~= '' then
    go(text)
    return
  end
  local sid = panel.state.session_id
  choose.input('fork', { prompt = 'Fork with message: ' }, function(input)
    if input and vim.trim(input) ~= '' then
      go(input)
    end
  end, function()
    return panel.state.session_id == sid or 'the panel shows another session now'
  end)
end

---@param v any
---@return string?
local function str(v)
  return (type(v) == 'string' and v ~= '') and v or nil
end

---@param text string
---@param n integer
---@return string
local function cut(text, n)
  text = text:gsub('%s+', ' ')
  return #text > n and (text:sub(1, n - 3) .. '...') or text
end

--- A branch's label that does not change as the conversation grows: its name, else "main" for
--- the first line, else where it forked (time and first message), plus a short id when two
--- such labels would read the same.
---@param b table a branch from openprogram/branches
---@param all? table[] every branch (to tell colliding labels apart)
---@return string
function M.branch_label(b, all)
  if str(b.name) then
    return b.name
  end
  if not str(b.forkId) then
    return 'main'
  end
  local hm = tostring(b.startedAt or ''):match('T(%d%d:%d%d)') or '?'
  local label = ('fork %s: %s'):format(hm, cut(str(b.startPreview) or str(b.preview) or '', 40))
  for _, o in ipairs(all or {}) do
    if o ~= b and not str(o.name) and str(o.forkId) and o.forkId ~= b.forkId
      and M.branch_label(o) == label then
      return ('%s #%s'):format(label, tostring(b.forkId):sub(-6))
    end
  end
  return label
end

---@param b table a branch from openprogram/branches
---@param all? table[] every branch
---@return string
function M.format_branch(b, all)
  if b.rename then
    return '  ✎ Name or rename a branch…'
  end
  local last = cut(tostring(b.preview or ''), 50)
  local code = b.codeDiffers and ' · ≠ code' or ''
  return ('%s %s · %d messages%s · last: %s'):format(b.active and '*' or ' ', M.branch_label(b, all), b.length or 0, code, last)
end

--- Name (or rename) a branch; asks for the name when not given.
---@param sid string
---@param b table a branch row
---@param name? string
---@param done? fun(ok: boolean)
function M.name_branch(sid, b, name, done)
  local function go(n)
    if not n or vim.trim(n) == '' then
      if done then
        done(false)
      end
      return
    end
    client.request(protocol.methods.NAME_BRANCH, { sessionId = sid, headId = b.headId, name = vim.trim(n) }, function(err)
      if err then
        warn('naming the branch failed: ' .. (err.message or '?'))
      end
      if done then
        done(err == nil)
      end
    end)
  end
  if name then
    go(name)
  else
    choose.input('branch name', { prompt = 'Branch name: ', default = str(b.name) or '' }, go)
  end
end

--- Name the active branch of the panel's session (`:OpenProgramBranchName [name]`).
---@param name? string
---@param done? fun(ok: boolean)
function M.name_active(name, done)
  local sid = panel.state.session_id
  if not sid then
    warn('no session in the panel yet')
    return
  end
  client.request(protocol.methods.BRANCHES, { sessionId = sid }, function(err, result)
    for _, b in ipairs((not err and result and result.branches) or {}) do
      if b.active then
        M.name_branch(sid, b, name ~= '' and name or nil, done)
        return
      end
    end
    warn('no active branch')
  end)
end

--- List the session's branches and check the chosen one out, redrawing the panel. The last
--- entry names or renames a branch instead.
---@param done? fun(head_id: string?)
function M.pick_branch(done)
  local sid = panel.state.session_id
  if not sid then
    warn('no session in the panel yet')
    return
  end
  client.request(protocol.methods.BRANCHES, { sessionId = sid }, function(err, result)
    if err or not result then
      warn('branches failed: ' .. (err and err.message or '?'))
      return
    end
    local branches = result.branches or {}
    local function select(items, prompt, on_choice)
      choose.select(items, {
        prompt = prompt,
        kind = 'openprogram.branch',
        format_item = function(b)
          return M.format_branch(b, branches)
        end,
      }, on_choice, function()
        return panel.state.session_id == sid or 'the panel shows another session now'
      end)
    end
    select(vim.list_extend(vim.list_extend({}, branches), { { rename = true } }), 'Branch', function(choice)
      if not choice then
        if done then
          done(nil)
        end
        return
      end
      if choice.rename then
        select(branches, 'Name which branch?', function(b)
          if b then
            M.name_branch(sid, b, nil, function()
              if done then
                done(nil)
              end
            end)
          end
        end)
        return
      end
      -- asks (once) whether the branch's code comes along; the switch is undoable
      require('openprogram.code').checkout(sid, choice.headId, function(moved)
        if not moved then
          if done then
            done(nil)
          end
          return
        end
        panel.open(false)
        panel.refresh(function()
          if done then
            done(choice.headId)
          end
        end)
      end)
    end)
  end)
end

---@param s table a session from openprogram/sessions
---@return string
function M.format_session(s)
  local sessions = require('openprogram.sessions')
  return vim.trim(sessions.format(s, not sessions.in_workspace(s, client.root())))
end

--- List sessions and show the chosen one in the panel.
---@param done? fun(session_id: string?)
function M.pick_session(done)
  client.request(protocol.methods.SESSIONS, {}, function(err, result)
    if err or not result then
      warn('sessions failed: ' .. (err and err.message or '?'))
      return
    end
    local sessions = require('openprogram.sessions')
    local mine, others = sessions.split(result.sessions or {}, client.root(), true)
    local items = vim.list_extend(vim.list_extend({ { id = false, title = 'New session' } }, mine), others)
    choose.select(items, {
      prompt = 'Session',
      kind = 'openprogram.session',
      format_item = function(s)
        return s.id and M.format_session(s) or '+ New session'
      end,
    }, function(choice)
      if not choice then
        if done then
          done(nil)
        end
        return
      end
      panel.open(false)
      local sid = choice.id or nil
      panel.set_session(sid, choice.id and choice.title or nil, function()
        if done then
          done(sid)
        end
      end)
    end)
  end)
end

return M
