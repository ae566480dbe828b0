--[[
Slash commands typed in the input (docs/protocol.md, "Slash commands"). `/fork [name]`,
`/undo`, `/model [name]`, `/mode [mode]` and `/new` run here, in the editor; `/compact` and
custom commands (`openprogram/commands`) go to the server as the message; an unknown `/name`
is not sent; `//text` sends `/text`. Anything else (`/usr/bin is missing`) is a plain message.
]]

local M = {}

--- Commands this editor carries out itself.
M.EDITOR = { fork = true, undo = true, model = true, mode = true, new = true }

---@class openprogram.PendingFork
---@field session_id string
---@field from string|false the node the fork continues after (false: a new root)
---@field name? string

--- A `/fork` waiting for its message (the next send forks instead of continuing).
---@type openprogram.PendingFork?
M.pending_fork = nil

local WORD = '[%w][%w_%.%-]*'

--- `/name rest` as (name, rest); nil when the text is not a command (the server's rule:
--- the name runs to the first space or line break and has a command name's form).
---@param text string
---@return string? name
---@return string? rest
function M.parse(text)
  local stripped = vim.trim(text)
  local head = stripped:match('^/([^ \n]+)')
  if not head then
    return nil
  end
  if not (head:match('^' .. WORD .. '$') or head:match('^' .. WORD .. ':' .. WORD .. '$')) then
    return nil
  end
  return head, vim.trim(stripped:sub(#head + 2))
end

local function say(msg, level)
  vim.notify('openprogram: ' .. msg, level or vim.log.levels.INFO)
  require('openprogram.panel').note(msg)
end

local function busy()
  local S = require('openprogram.panel').state
  return S.busy or S.watching
end

--- The custom commands the server lists (nil when it cannot be asked).
---@return table<string, boolean>?
local function custom_names()
  local client = require('openprogram.client')
  if not client.ensure() then
    return nil
  end
  local res = client.request_sync(require('openprogram.protocol').methods.COMMANDS, {}, 3000)
  if type(res) ~= 'table' or type(res.commands) ~= 'table' then
    return nil
  end
  local out = {}
  for _, c in ipairs(res.commands) do
    out[c.name] = true
  end
  return out
end

--- The newest user message of the branch on screen.
---@return table?
local function last_user_node()
  local loaded = require('openprogram.panel').state.loaded or {}
  for i = #loaded, 1, -1 do
    if loaded[i].role == 'user' then
      return loaded[i]
    end
  end
  return nil
end

--- `/fork [name]`: the next message replaces the last one on a new branch.
---@param name string
local function fork(name)
  local S = require('openprogram.panel').state
  local node = S.session_id and last_user_node()
  if not node then
    say('/fork: nothing to fork yet: send a message first', vim.log.levels.WARN)
    return
  end
  local from = node.predecessor
  if from == nil or from == vim.NIL then
    from = false
  end
  M.pending_fork = { session_id = S.session_id, from = from, name = name ~= '' and name or nil }
  local panel = require('openprogram.panel')
  panel.open(true)
  local input = panel.state.input_buf
  if input and vim.api.nvim_buf_is_valid(input) then
    vim.api.nvim_buf_set_lines(input, 0, -1, false, vim.split(tostring(node.text or ''), '\n', { plain = true }))
    vim.bo[input].modified = false
  end
  say(('fork%s: edit your last message and send it; it goes on a new branch (the old one keeps it)')
    :format(name ~= '' and (' "' .. name .. '"') or ''))
end

--- `/undo`: the newest turn of the session not undone yet according to the server
--- (`undoneBy`: whichever editor or the CLI undid it).
local function undo()
  local S = require('openprogram.panel').state
  local sid = S.session_id
  if not sid then
    say('/undo: no session in the panel', vim.log.levels.WARN)
    return
  end
  local checkpoints = require('openprogram.checkpoints')
  checkpoints.next_to_undo(sid, function(cp, err)
    if cp then
      return checkpoints.undo_turn(cp.id)
    end
    say('/undo: ' .. (err or 'no turn left to undo in this session'), err and vim.log.levels.ERROR or nil)
  end)
end

--- Carry out a typed message's command. Returns true when it was handled here (nothing more to
--- send), false when the text goes to the server as a message.
---@param text string
---@return boolean
function M.run(text)
  local stripped = vim.trim(text)
  if stripped:sub(1, 2) == '//' then
    require('openprogram.chat').send(stripped:sub(2))
    return true
  end
  local name, rest = M.parse(text)
  if not name then
    return false
  end
  rest = rest or ''
  if M.EDITOR[name] then
    if busy() and (name == 'fork' or name == 'undo') then
      say(('/%s: a turn is running; cancel it first (<C-c>)'):format(name), vim.log.levels.WARN)
    elseif name == 'fork' then
      fork(rest)
    elseif name == 'undo' then
      undo()
    elseif name == 'model' then
      require('openprogram.pickers').pick_model(rest)
      if rest ~= '' then
        say('model: ' .. rest)
      end
    elseif name == 'mode' then
      if require('openprogram.pickers').pick_mode(rest) ~= false and rest ~= '' then
        say('permission mode: ' .. rest)
      end
    else -- new
      M.pending_fork = nil
      require('openprogram.panel').set_session(nil, nil)
      say('new conversation: your next message starts a session')
    end
    return true
  end
  if busy() then
    say(('/%s: a turn is running; cancel it first (<C-c>)'):format(name), vim.log.levels.WARN)
    return true
  end
  if name == 'compact' then
    return false
  end
  local custom = custom_names()
  if custom and not custom[name] then
    say(('unknown command /%s (type / then <C-x><C-u> to list the commands; //%s sends it as text)')
      :format(name, name), vim.log.levels.WARN)
    return true
  end
  return false
end

--- Send the input's text: a pending `/fork` forks with it, a command runs, else a message.
---@param text string
function M.submit(text)
  local pending = M.pending_fork
  if pending and not M.parse(text) then
    M.pending_fork = nil
    if pending.session_id == require('openprogram.panel').state.session_id then
      local chat = require('openprogram.chat')
      if pending.from == false then
        chat.fork(false, text, pending.name)
      else
        require('openprogram.code').decide(function(restore)
          if restore ~= nil then
            chat.fork(pending.from, text, pending.name, restore)
          end
        end)
      end
      return
    end
  end
  if not M.run(text) then
    require('openprogram.chat').send(text)
  end
end

return M
