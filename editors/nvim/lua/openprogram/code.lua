--[[
Code that follows the conversation: whether switching branch (or forking from an earlier
message) also brings the workspace to that branch's code, undoing such a switch, and comparing
two branches' code (`openprogram/branchDiff`) in diff tabs.

The question is asked once; "remember" answers are kept in
`stdpath('state')/openprogram/switch_code.json` (`opts.switch_code = 'always'|'never'` sets it
in the config instead; 'ask', the default, asks until an answer is remembered).

  require('openprogram.code').checkout(sid, head_id, function(result) end)
  require('openprogram.code').pick_diff()
]]

local choose = require('openprogram.choose')
local client = require('openprogram.client')
local protocol = require('openprogram.protocol')

local M = {}

---@param msg string
---@param level? integer
local function say(msg, level)
  vim.notify('openprogram: ' .. msg, level or vim.log.levels.INFO)
end

--- Where a remembered answer is kept.
---@return string
function M.choice_file()
  return vim.fs.joinpath(vim.fn.stdpath('state'), 'openprogram', 'switch_code.json')
end

--- The remembered answer: 'always', 'never' or nil.
---@return string?
function M.remembered()
  local fd = io.open(M.choice_file(), 'r')
  if not fd then
    return nil
  end
  local text = fd:read('*a')
  fd:close()
  local ok, data = pcall(vim.json.decode, text)
  if ok and type(data) == 'table' and (data.choice == 'always' or data.choice == 'never') then
    return data.choice
  end
  return nil
end

--- Remember an answer (nil forgets it).
---@param choice 'always'|'never'|nil
function M.remember(choice)
  local file = M.choice_file()
  if choice == nil then
    os.remove(file)
    return
  end
  vim.fn.mkdir(vim.fs.dirname(file), 'p')
  local fd = assert(io.open(file, 'w'))
  fd:write(vim.json.encode({ choice = choice }))
  fd:close()
end

M.CHOICES = {
  { label = 'Yes, switch the code too (remember)', restore = true, keep = 'always' },
  { label = 'Yes, this time', restore = true },
  { label = 'No, keep the files as they are (remember)', restore = false, keep = 'never' },
  { label = 'No, this time', restore = false },
}

--- Whether a branch switch also switches the code: `cb(true|false)`, or `cb(nil)` when the
--- question was dismissed (then nothing should happen).
---@param cb fun(restore: boolean?)
function M.decide(cb)
  local opt = require('openprogram.config').options.switch_code
  if opt == 'always' or opt == 'never' then
    cb(opt == 'always')
    return
  end
  local saved = M.remembered()
  if saved then
    cb(saved == 'always')
    return
  end
  choose.select(M.CHOICES, {
    prompt = "Switching branch: also bring the workspace's files to that branch's code?",
    kind = 'openprogram.switch_code',
    format_item = function(c)
      return c.label
    end,
  }, function(choice)
    if not choice then
      cb(nil)
      return
    end
    if choice.keep then
      M.remember(choice.keep)
    end
    cb(choice.restore)
  end)
end

--- The last switch that changed files: { sessionId, safety, previous }.
---@type table?
M.last_switch = nil

--- After a request that restored code (`checkout`, `fork` with restoreCode): reload buffers,
--- remember how to undo it and say what changed.
---@param sid string
---@param out table {restored, safetyCheckpointId, conflicts?}
---@param previous? string the head before
function M.switched(sid, out, previous)
  local restored = out.restored or {}
  require('openprogram.checkpoints').reload_buffers(restored)
  if out.safetyCheckpointId and #restored > 0 then
    M.last_switch = { sessionId = sid, safety = out.safetyCheckpointId, previous = previous }
  end
  local msg
  if #restored == 0 then
    msg = "the workspace already had this branch's code"
  else
    msg = ("switched the code to this branch (%d file%s); :OpenProgramUndoSwitch undoes it"):format(
      #restored, #restored == 1 and '' or 's')
  end
  if out.conflicts and #out.conflicts > 0 then
    msg = msg .. ('; kept %s (changed by another program during the switch)'):format(table.concat(out.conflicts, ', '))
  end
  say(msg)
  require('openprogram.panel').note(msg)
end

--- Check a branch out, asking (once) whether its code comes along.
---@param sid string
---@param head_id string
---@param done? fun(result: table?)
function M.checkout(sid, head_id, done)
  M.decide(function(restore)
    if restore == nil then
      if done then
        done(nil)
      end
      return
    end
    client.request(protocol.methods.CHECKOUT, { sessionId = sid, headId = head_id, restoreCode = restore }, function(err, result)
      if err or not result then
        say('checkout failed: ' .. (err and err.message or '?'), vim.log.levels.WARN)
        if done then
          done(nil)
        end
        return
      end
      if restore then
        M.switched(sid, result, result.previousHeadId)
      end
      if done then
        done(result)
      end
    end)
  end)
end

--- Undo the last switch: its files back (a restore of the safety checkpoint), then the head.
---@param done? fun(ok: boolean)
function M.undo_switch(done)
  local last = M.last_switch
  if not last then
    say('no branch switch to undo')
    if done then
      done(false)
    end
    return
  end
  M.last_switch = nil
  client.request(protocol.methods.RESTORE, { checkpointId = last.safety }, function(err, result)
    if err or not result then
      say('undoing the switch failed: ' .. (err and err.message or '?'), vim.log.levels.ERROR)
      if done then
        done(false)
      end
      return
    end
    require('openprogram.checkpoints').reload_buffers(result.restored or {})
    local function finish()
      say('the switch is undone')
      require('openprogram.panel').refresh(function()
        if done then
          done(true)
        end
      end)
    end
    if not last.previous then
      finish()
      return
    end
    client.request(protocol.methods.CHECKOUT, { sessionId = last.sessionId, headId = last.previous }, finish)
  end)
end

local side = require('openprogram.checkpoints').side_buffer

--- One tab per differing file: the `from` branch's code left, the `to` branch's right.
---@param result table the branchDiff result
---@param labels {from: string, to: string}
---@return integer[] tabpages
function M.open_diff(result, labels)
  local tabs = {}
  for _, f in ipairs(result.files or {}) do
    vim.cmd('tabnew')
    local scratch = vim.api.nvim_get_current_buf()
    local before, after = f.before, f.after
    if f.binary then
      before = f.status ~= 'added' and '(binary file)' or ''
      after = f.status ~= 'deleted' and '(binary file)' or ''
    end
    local key = tostring(result.fromCheckpointId or '?'):sub(1, 8) .. '..' .. tostring(result.toCheckpointId or '?'):sub(1, 8)
    local name = require('openprogram.checkpoints').side_name
    local left_buf = side(name(f.path, tostring(labels.from), key), before, f.path)
    local right_buf = side(name(f.path, tostring(labels.to), key), after, f.path)
    local left = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(left, left_buf)
    if vim.api.nvim_buf_is_valid(scratch) and scratch ~= left_buf then
      pcall(vim.api.nvim_buf_delete, scratch, { force = true })
    end
    vim.cmd('diffthis')
    vim.cmd('rightbelow vsplit')
    local right = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(right, right_buf)
    vim.cmd('diffthis')
    vim.wo[left].winbar = ('%s · %s (%s)'):format(labels.from, f.path, f.status or '')
    vim.wo[right].winbar = ('%s · %s'):format(labels.to, f.path)
    table.insert(tabs, vim.api.nvim_get_current_tabpage())
  end
  if #tabs == 0 then
    say('the two branches have the same code')
  end
  return tabs
end

--- Compare two branches' code (head ids) and open the diff tabs.
---@param sid string
---@param from table a branch row (left)
---@param to table a branch row (right)
---@param done? fun(tabs: integer[]?)
function M.diff(sid, from, to, done)
  client.request(protocol.methods.BRANCH_DIFF, { sessionId = sid, fromHeadId = from.headId, toHeadId = to.headId }, function(err, result)
    if err or not result then
      say('branch diff failed: ' .. (err and err.message or '?'), vim.log.levels.WARN)
      if done then
        done(nil)
      end
      return
    end
    local label = require('openprogram.branches').branch_label
    local tabs = M.open_diff(result, { from = 'branch ' .. label(from), to = 'branch ' .. label(to) })
    if done then
      done(tabs)
    end
  end)
end

--- Pick a branch and compare the active branch's code with it (`:OpenProgramBranchDiff`).
---@param done? fun(tabs: integer[]?)
function M.pick_diff(done)
  local panel = require('openprogram.panel')
  local sid = panel.state.session_id
  if not sid then
    say('no session in the panel yet', vim.log.levels.WARN)
    return
  end
  client.request(protocol.methods.BRANCHES, { sessionId = sid }, function(err, result)
    local branches = (not err and result and result.branches) or {}
    local active, others = nil, {}
    for _, b in ipairs(branches) do
      if b.active then
        active = b
      else
        table.insert(others, b)
      end
    end
    if not active or #others == 0 then
      say('this session has only one branch', vim.log.levels.WARN)
      if done then
        done(nil)
      end
      return
    end
    local fmt = require('openprogram.branches').format_branch
    choose.select(others, {
      prompt = "Compare this branch's code with",
      kind = 'openprogram.branch_diff',
      format_item = function(b)
        return fmt(b, branches)
      end,
    }, function(choice)
      if choice then
        M.diff(sid, active, choice, done)
      elseif done then
        done(nil)
      end
    end, function()
      return panel.state.session_id == sid or 'the panel shows another session now'
    end)
  end)
end

return M
