--[[
Checkpoint review: list a session's checkpoints (`vim.ui.select`, kind
'openprogram.checkpoint'), open each changed file of the chosen one as a side-by-side diff
(one tab per file, `before` left, `after` right, both `diffthis`), and restore.

`openprogram/checkpointDiff` answers { checkpointId, diff, files = { {path, status, before?, after?} } }.

Ids are shown and completed as 12-character prefixes (as `openprogram-lsp checkpoints` prints
them; longer where two would clash): the server accepts any unique prefix of 6 or more.
]]

local client = require('openprogram.client')
local protocol = require('openprogram.protocol')

local M = {}

local SHORT = 12

--- The shortest prefix (at least 12 characters) of each id that no other id in `ids` shares.
---@param ids string[]
---@return table<string, string>
function M.short_ids(ids)
  local out = {}
  for _, id in ipairs(ids) do
    local n = math.min(SHORT, #id)
    for _, other in ipairs(ids) do
      if other ~= id then
        while n < #id and other:sub(1, n) == id:sub(1, n) do
          n = n + 1
        end
      end
    end
    out[id] = id:sub(1, n)
  end
  return out
end

---@param cp table a Checkpoint
---@param short? string the id to show (default: its first 12 characters)
---@return string
function M.format(cp, short)
  local n = type(cp.files) == 'table' and #cp.files or 0
  local when = tostring(cp.createdAt or ''):gsub('T', ' '):sub(1, 19)
  local msg = tostring(cp.message or ''):match('^[^\n]*') or ''
  local id = short or require('openprogram.render').short_id(cp.id)
  return ('%s  %s  %d file%s  %s'):format(id, when, n, n == 1 and '' or 's', msg)
end

--- The name of one side of a diff tab, as its tab label shows it: the file's name first, its
--- folder, the side and which turn or branch, with no "/" (a tab label shrinks every part before
--- a "/" to one letter: `openprogram://c0mx…/after/src/app.py` read `o//c/a/s/app.py`).
---@param path string
---@param side string
---@param tag string the checkpoint or branch
---@return string
function M.side_name(path, side, tag)
  local tail = vim.fn.fnamemodify(path, ':t')
  local dir = vim.fn.fnamemodify(path, ':h')
  local where = (dir ~= '.' and dir ~= '') and (' (%s)'):format(dir) or ''
  return (('%s%s · %s · %s'):format(tail, where, side, tag):gsub('/', ' › '))
end

--- A scratch buffer holding one side of a diff.
---@param name string
---@param text? string
---@param path string used for filetype detection
---@return integer buf
function M.side_buffer(name, text, path)
  local full = vim.fn.fnamemodify(name, ':p')
  for _, b in ipairs(vim.api.nvim_list_bufs()) do -- exact names (bufnr() matches patterns)
    local n = vim.api.nvim_buf_get_name(b)
    if n == name or n == full then
      vim.api.nvim_buf_delete(b, { force = true })
    end
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  local lines = {}
  if text and text ~= '' then
    lines = vim.split(text, '\n', { plain = true })
    if lines[#lines] == '' then
      table.remove(lines)
    end
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  pcall(vim.api.nvim_buf_set_name, buf, name)
  local ft = vim.filetype.match({ filename = path, buf = buf })
  if ft then
    vim.bo[buf].filetype = ft
  end
  vim.bo[buf].modifiable = false
  return buf
end

--- The hunk (index, 0-based as the server counts) holding `line` of one side, or nil.
---@param hunks table[] files[].hunks
---@param line integer 1-based cursor line
---@param side 'before'|'after'
---@return integer? index
function M.hunk_at(hunks, line, side)
  local start_key = side == 'before' and 'oldStart' or 'newStart'
  local count_key = side == 'before' and 'oldLines' or 'newLines'
  for i, h in ipairs(hunks or {}) do
    local start, count = h[start_key] or 0, h[count_key] or 0
    if count == 0 then
      -- nothing on this side: the hunk sits between `start` and `start + 1`
      if line == start or line == start + 1 or (start == 0 and line == 1) then
        return i - 1
      end
    elseif line >= start and line < start + count then
      return i - 1
    end
  end
  return nil
end

--- The first line of each hunk on one side (where ]h / [h land).
---@param hunks table[]
---@param side 'before'|'after'
---@return integer[]
function M.hunk_lines(hunks, side)
  local out = {}
  for _, h in ipairs(hunks or {}) do
    local start = side == 'before' and h.oldStart or h.newStart
    table.insert(out, math.max(1, start or 1))
  end
  return out
end

--- Move to the next (dir 1) or previous (dir -1) hunk in the current diff window.
---@param dir integer
function M.jump_hunk(dir)
  local info = vim.b.openprogram_diff
  if type(info) ~= 'table' then
    return
  end
  local lines = M.hunk_lines(info.hunks, info.side)
  local cur = vim.api.nvim_win_get_cursor(0)[1]
  local target
  if dir > 0 then
    for _, l in ipairs(lines) do
      if l > cur then
        target = l
        break
      end
    end
  else
    for i = #lines, 1, -1 do
      if lines[i] < cur then
        target = lines[i]
        break
      end
    end
  end
  if target then
    vim.api.nvim_win_set_cursor(0, { math.min(target, vim.api.nvim_buf_line_count(0)), 0 })
  else
    vim.notify('openprogram: no more hunks', vim.log.levels.INFO)
  end
end

--- Send a restore-like request (restore, restoreHunk): on success remember its safety checkpoint,
--- bring buffers up to date and say what happened (`describe(result)`, also noted in the panel).
---@param method string
---@param params table
---@param what string what failed, for the error message
---@param describe fun(result: table): string
---@param done? fun(result: table?)
function M.request_restore(method, params, what, describe, done)
  client.request(method, params, function(err, result)
    if err or not result then
      vim.notify(('openprogram: %s failed: %s'):format(what, err and err.message or '?'), vim.log.levels.ERROR)
      if done then
        done(nil)
      end
      return
    end
    M.last_safety = result.safetyCheckpointId
    M.reload_buffers(result.restored or {})
    local msg = describe(result) .. M.not_restored_note(result)
    local left = result.notRestored and #result.notRestored > 0
    vim.notify('openprogram: ' .. msg, left and vim.log.levels.WARN or vim.log.levels.INFO)
    require('openprogram.panel').note(msg)
    if done then
      done(result)
    end
  end)
end

--- What a restore left as it was (files no checkpoint could record...), as a sentence to append.
---@param result table a RestoreResult
---@return string
function M.not_restored_note(result)
  local items = result.notRestored or {}
  if #items == 0 then
    return ''
  end
  local parts = {}
  for _, item in ipairs(items) do
    parts[#parts + 1] = ('%s (%s)'):format(item.path, item.reason)
  end
  return ('; NOT restored, left as they are: %s'):format(table.concat(parts, '; '))
end

--- The safety checkpoint of the last restore made from a diff tab (`U` undoes it).
---@type string?
M.last_safety = nil

--- Restore the hunk under the cursor of a diff tab to how it was before the checkpoint.
---@param done? fun(result: table?)
function M.restore_hunk_at_cursor(done)
  local info = vim.b.openprogram_diff
  if type(info) ~= 'table' then
    vim.notify('openprogram: not in a checkpoint diff', vim.log.levels.WARN)
    return
  end
  local index = M.hunk_at(info.hunks, vim.api.nvim_win_get_cursor(0)[1], info.side)
  if not index then
    vim.notify('openprogram: the cursor is not on a changed hunk', vim.log.levels.WARN)
    if done then
      done(nil)
    end
    return
  end
  local params = { checkpointId = info.checkpointId, path = info.path, hunk = index }
  M.request_restore(protocol.methods.RESTORE_HUNK, params, 'restoring the hunk', function(result)
    return ('restored hunk %d of %s; undo with U here or :OpenProgramRestore %s'):format(
      index + 1, info.path, require('openprogram.render').short_id(result.safetyCheckpointId))
  end, done)
end

--- Undo the last restore made from a diff tab.
function M.undo_last()
  if not M.last_safety then
    vim.notify('openprogram: nothing to undo', vim.log.levels.INFO)
    return
  end
  local id = M.last_safety
  M.last_safety = nil
  M.restore(id)
end

--- Bring loaded buffers of restored paths up to date; a buffer whose file a restore deleted
--- (and that has no unsaved edits) is wiped instead of keeping stale text.
---@param paths string[] workspace-relative
---@param root? string the workspace (default: this one)
function M.reload_buffers(paths, root)
  root = root or client.root()
  for _, rel in ipairs(paths) do
    local full = vim.fs.normalize(root .. '/' .. rel)
    local buf = vim.fn.bufnr(full)
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].modified then
      if vim.uv.fs_stat(full) then
        pcall(vim.api.nvim_buf_call, buf, function()
          vim.cmd('silent! checktime')
        end)
      else
        for _, w in ipairs(vim.fn.win_findbuf(buf)) do
          vim.api.nvim_win_call(w, function()
            vim.cmd('enew')
          end)
        end
        pcall(vim.api.nvim_buf_delete, buf, {})
        vim.notify(('openprogram: %s was deleted by the restore; its buffer is closed'):format(rel),
          vim.log.levels.INFO)
      end
    end
  end
  pcall(vim.cmd.checktime)
  -- the lenses of a restored file follow it (a restored hunk's "edited by the agent" goes)
  vim.schedule(require('openprogram.blame').refresh_all)
end

--- Open one tab per changed file with before/after windows in diff mode.
---@param result table the checkpointDiff result
---@param turn? string which turn it was (its first words), for the tab names
---@return integer[] tabpages
function M.open_diff(result, turn)
  local tabs = {}
  local id = tostring(result.checkpointId or '?')
  for _, f in ipairs(result.files or {}) do
    vim.cmd('tabnew')
    local scratch = vim.api.nvim_get_current_buf()
    local before_text, after_text = f.before, f.after
    if f.binary then
      -- No text to diff: say so on both sides.
      before_text = f.status ~= 'added' and '(binary file)' or ''
      after_text = f.status ~= 'deleted' and '(binary file)' or ''
    end
    local tag = turn or ('checkpoint ' .. require('openprogram.render').short_id(id))
    local before = M.side_buffer(M.side_name(f.path, 'before', tag), before_text, f.path)
    local after = M.side_buffer(M.side_name(f.path, 'after', tag), after_text, f.path)
    local left = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(left, before)
    if vim.api.nvim_buf_is_valid(scratch) and scratch ~= before then
      pcall(vim.api.nvim_buf_delete, scratch, { force = true })
    end
    vim.cmd('diffthis')
    vim.cmd('rightbelow vsplit')
    local right = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(right, after)
    vim.cmd('diffthis')
    vim.wo[left].winbar = ('before · %s (%s)'):format(f.path, f.status or '')
    vim.wo[right].winbar = ('after · %s · checkpoint %s · ]h [h hunks · R restore hunk · X undo turn · U undo'):format(f.path, id)
    for side, b in pairs({ before = before, after = after }) do
      vim.b[b].openprogram_diff = { checkpointId = id, path = f.path, hunks = f.hunks or {}, side = side }
      local function map(lhs, fn, desc)
        vim.keymap.set('n', lhs, fn, { buffer = b, nowait = true, silent = true, desc = 'OpenProgram: ' .. desc })
      end
      map(']h', function()
        M.jump_hunk(1)
      end, 'next hunk')
      map('[h', function()
        M.jump_hunk(-1)
      end, 'previous hunk')
      map('R', M.restore_hunk_at_cursor, 'restore this hunk as it was before the checkpoint')
      map('U', M.undo_last, 'undo the last restore')
      map('X', function()
        M.undo_turn(id)
      end, 'undo this turn: its files as they were before it')
    end
    table.insert(tabs, vim.api.nvim_get_current_tabpage())
  end
  if #tabs == 0 then
    vim.notify('openprogram: checkpoint ' .. id .. ' changed no files', vim.log.levels.INFO)
  end
  return tabs
end

--- The turn a checkpoint was taken after, as a tab name shows it (`turn: fix the tests`: the
--- first words of its message, the user's), or nil for another kind of checkpoint.
---@param cp table
---@return string?
function M.turn_label(cp)
  local msg = vim.trim(tostring(cp.message or ''):match('^[^\n]*') or '')
  msg = msg:match('^turn [^%s:]+: (.*)$') or msg -- "turn <id>: <the user's message>"
  if cp.kind ~= 'turn' or msg == '' then
    return nil
  end
  return 'turn: ' .. vim.fn.strcharpart(msg, 0, 30) .. (vim.fn.strchars(msg) > 30 and '…' or '')
end

--- Fetch a checkpoint's diff and open it.
---@param checkpoint_id string
---@param done? fun(tabs: integer[])
---@param turn? string the turn's label for the tab names (`turn_label`)
function M.show(checkpoint_id, done, turn)
  client.request(protocol.methods.CHECKPOINT_DIFF, { checkpointId = checkpoint_id }, function(err, result)
    if err or not result then
      vim.notify('openprogram: checkpointDiff failed: ' .. (err and err.message or '?'), vim.log.levels.ERROR)
      return
    end
    local tabs = M.open_diff(result, turn)
    if done then
      done(tabs)
    end
  end)
end

--- List checkpoints (of the panel's session when there is one) and open the chosen one's diff.
---@param done? fun(tabs: integer[]?)
function M.pick(done)
  local sid = require('openprogram.panel').state.session_id
  client.request(protocol.methods.CHECKPOINTS, { sessionId = sid }, function(err, result)
    if err or not result then
      vim.notify('openprogram: checkpoints failed: ' .. (err and err.message or '?'), vim.log.levels.ERROR)
      return
    end
    local list = result.checkpoints or {}
    if #list == 0 then
      vim.notify('openprogram: no checkpoints yet', vim.log.levels.INFO)
      if done then
        done(nil)
      end
      return
    end
    local short = M.short_ids(vim.tbl_map(function(cp)
      return tostring(cp.id)
    end, list))
    local function format(cp)
      return M.format(cp, short[tostring(cp.id)])
    end
    require('openprogram.choose').select(list, { prompt = 'Checkpoint', kind = 'openprogram.checkpoint', format_item = format }, function(cp)
      if not cp then
        if done then
          done(nil)
        end
        return
      end
      M.show(cp.id, done, M.turn_label(cp))
    end)
  end)
end

--- Restore a checkpoint (optionally some paths); the message names the safety checkpoint.
---@param checkpoint_id string
---@param paths? string[]
---@param done? fun(result: table?)
function M.restore(checkpoint_id, paths, done)
  local params = { checkpointId = checkpoint_id }
  if paths and #paths > 0 then
    params.paths = paths
  end
  M.request_restore(protocol.methods.RESTORE, params, 'restore', function(result)
    local n = #(result.restored or {})
    local short = require('openprogram.render').short_id
    return ('restored %d file%s from %s; undo with :OpenProgramRestore %s'):format(
      n, n == 1 and '' or 's', short(checkpoint_id), short(result.safetyCheckpointId))
  end, done)
end

--- The newest turn checkpoint of a session (all sessions when nil) that changed files and is
--- not undone yet according to the server (no `undoneBy`, whoever undid it).
---@param session_id? string
---@param done fun(cp: table?, err: string?)
function M.next_to_undo(session_id, done)
  client.request(protocol.methods.CHECKPOINTS, { sessionId = session_id }, function(err, result)
    if err then
      return done(nil, 'listing the checkpoints failed: ' .. (err.message or '?'))
    end
    for _, cp in ipairs((result and result.checkpoints) or {}) do
      if cp.kind == 'turn' and #(cp.files or {}) > 0 and not cp.undoneBy then
        return done(cp)
      end
    end
    done(nil)
  end)
end

--- Undo a turn: the files its checkpoint changed go back to how they were before it, in one
--- restore (`openprogram/restore {undo = true}`) that is itself undoable (`U`, or the id shown).
--- Without an id: the newest turn of the panel's session not undone yet (`next_to_undo`).
---@param checkpoint_id? string
---@param done? fun(result: table?)
function M.undo_turn(checkpoint_id, done)
  local short = require('openprogram.render').short_id
  local function undo(id)
    M.request_restore(protocol.methods.RESTORE, { checkpointId = id, undo = true }, 'undoing the turn', function(result)
      local files = result.restored or {}
      return ('undid turn %s (%d file%s: %s); undo this with U or :OpenProgramRestore %s'):format(
        short(id), #files, #files == 1 and '' or 's', table.concat(files, ', '), short(result.safetyCheckpointId))
    end, done)
  end
  if checkpoint_id then
    return undo(checkpoint_id)
  end
  local sid = require('openprogram.panel').state.session_id
  M.next_to_undo(sid, function(cp, err)
    if cp then
      return undo(cp.id)
    end
    vim.notify('openprogram: ' .. (err or ('no turn left to undo' .. (sid and ' in this session' or ''))),
      err and vim.log.levels.ERROR or vim.log.levels.INFO)
    if done then
      done(nil)
    end
  end)
end

--- Checkpoint ids (unique 12+ character prefixes) for command-line completion, newest first.
---@param lead string
---@return string[]
function M.complete(lead)
  local c = client.find()
  if not c then
    return {}
  end
  local res = client.request_sync(protocol.methods.CHECKPOINTS, {}, 2000)
  local ids = {}
  for _, cp in ipairs(type(res) == 'table' and res.checkpoints or {}) do
    table.insert(ids, tostring(cp.id))
  end
  local short = M.short_ids(ids)
  local out = {}
  for _, id in ipairs(ids) do
    if vim.startswith(id, lead) then
      table.insert(out, #lead > #short[id] and id or short[id])
    end
  end
  return out
end

return M
