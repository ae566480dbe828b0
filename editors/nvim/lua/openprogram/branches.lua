--[[
Branches and sessions: fork from the message under the cursor, switch branch
(`openprogram/branches` + `openprogram/checkout`), switch session (`openprogram/sessions`).

Every choice goes through `vim.ui.select` / `vim.ui.input`, so picker plugins apply
(`opts.kind` is 'openprogram.branch' or 'openprogram.session').
]]

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
    -- (`openprogram/fork` with `fromNodeId: null`).
    require('openprogram.chat').fork(from, input)
  end
  if text and text ~= '' then
    go(text)
    return
  end
  vim.ui.input({ prompt = 'Fork with message: ' }, function(input)
    if input and vim.trim(input) ~= '' then
      go(input)
    end
  end)
end

---@param b table a branch from openprogram/branches
---@return string
function M.format_branch(b)
  local preview = tostring(b.preview or ''):gsub('%s+', ' ')
  if #preview > 60 then
    preview = preview:sub(1, 57) .. '...'
  end
  local label = (b.name and b.name ~= vim.NIL and b.name ~= '') and (b.name .. ': ' .. preview) or preview
  return ('%s %s · %d messages · %s'):format(b.active and '*' or ' ', label, b.length or 0, b.headId)
end

--- List the session's branches and check the chosen one out, redrawing the panel.
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
    vim.ui.select(result.branches or {}, {
      prompt = 'Branch',
      kind = 'openprogram.branch',
      format_item = M.format_branch,
    }, function(choice)
      if not choice then
        if done then
          done(nil)
        end
        return
      end
      client.request(protocol.methods.CHECKOUT, { sessionId = sid, headId = choice.headId }, function(e2)
        if e2 then
          warn('checkout failed: ' .. (e2.message or '?'))
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
  local title = (s.title and s.title ~= vim.NIL and s.title ~= '') and s.title or s.id
  return ('%s · %s · %s'):format(title, tostring(s.status or ''), tostring(s.updatedAt or ''))
end

--- List sessions and show the chosen one in the panel.
---@param done? fun(session_id: string?)
function M.pick_session(done)
  client.request(protocol.methods.SESSIONS, {}, function(err, result)
    if err or not result then
      warn('sessions failed: ' .. (err and err.message or '?'))
      return
    end
    local items = vim.list_extend({ { id = false, title = 'New session' } }, result.sessions or {})
    vim.ui.select(items, {
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
