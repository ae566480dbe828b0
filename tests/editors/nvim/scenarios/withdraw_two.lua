-- Two approvals pending at once: the panel's turn and a chat on another session. Cancelling the
-- panel's turn makes the server withdraw its prompt; the permission.withdrawn event names the
-- toolCallId, so exactly that prompt and its diff preview close (before its turn ends) while
-- the other stays open. Answering the other still writes its file.
local H = dofile(os.getenv('OP_HARNESS'))

--- Names of the diff preview buffers on screen.
local function previews()
  local out = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    local b = vim.api.nvim_win_get_buf(w)
    if vim.bo[b].filetype == 'diff' then
      table.insert(out, (vim.api.nvim_buf_get_name(b):gsub('^.*approve/', '')))
    end
  end
  table.sort(out)
  return out
end

H.run(function()
  H.setup()
  H.track()
  local async = require('openprogram.async')
  local S = require('openprogram.panel').state
  local selects = {}
  -- A settled prompt leaves the pending list at once, not when its coroutine next runs: the
  -- withdrawal and turn.finished often arrive in one read and are handled in the same tick.
  local probe
  local untrack_probe = async.track('probe-turn', function(v)
    probe = v
  end, 'probe-call')
  async.withdraw_key('probe-call', 'probe-turn', 'gone')
  H.out.probe = { pending = #async.pending, value = probe }
  untrack_probe()
  H.out.withdrawn = {}
  H.out.asked = {} -- path -> toolCallId of its pending prompt
  -- the panel's notes as written: a withdrawn prompt's note comes when its coroutine resumes
  -- (scheduled), which may be after turn.finished; the turn's redraw wipes notes
  H.out.panel_notes = {}
  local panel = require('openprogram.panel')
  local note = panel.note
  panel.note = function(text)
    table.insert(H.out.panel_notes, text)
    note(text)
  end
  vim.ui.select = function(items, opts, on_choice)
    table.insert(selects, { prompt = opts.prompt, items = items, on_choice = on_choice })
    local path = opts.prompt:match('Write ([^?]+)%?$')
    H.out.asked[path or '?'] = async.pending[#async.pending].key -- tracked before it asks
  end
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      local p = a.data
      if p.type == 'permission.withdrawn' then
        table.insert(H.out.withdrawn, { toolCallId = p.data.toolCallId, reason = p.data.reason, session = p.sessionId })
      elseif p.type == 'turn.finished' and p.sessionId == S.session_id then
        -- Fires once the panel handled turn.finished, which withdraws only that turn's
        -- prompts: the other turn's (b.txt) stays, and a.txt's was gone before.
        H.out.pending_at_finish = vim.tbl_map(function(e)
          return e.key
        end, async.pending)
        H.out.lines_at_finish = H.panel_lines()
      end
    end,
  })

  vim.cmd('OpenProgram write a.txt')
  H.wait(function()
    return #selects >= 1
  end, 'the panel turn approval')
  local other
  require('openprogram.client').request('openprogram/chat', { text = 'write b.txt' }, function(err, res)
    other = res or { error = err }
  end)
  H.wait(function()
    return #selects >= 2
  end, 'the second approval')
  H.out.pending_before = #async.pending
  H.out.previews_before = previews()

  require('openprogram').cancel()
  H.wait(function()
    return #async.pending == 1
  end, 'the panel prompt to close')
  H.out.remaining = async.pending[1].key
  H.out.previews_after = previews()
  H.wait(function()
    return H.turns >= 1
  end, 'the cancelled panel turn')
  H.out.panel_status = S.session_id and 'done' or '?'

  for _, it in ipairs(selects[2].items) do
    if it.optionId == 'allow_once' then
      selects[2].on_choice(it)
    end
  end
  H.wait(function()
    return other ~= nil
  end, 'the other turn')
  H.out.other = other
  H.out.pending_end = #async.pending
  H.out.previews_end = previews()
  H.out.a = H.read('a.txt')
  H.out.b = H.read('b.txt')
  H.out.lines = H.panel_lines()
end)
