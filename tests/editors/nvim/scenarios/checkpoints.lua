-- Checkpoints: two turns edit a file (accept-edits: no prompts), review the newest checkpoint
-- as diff windows, restore the first turn's checkpoint, then undo that through the safety one.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ permission_mode = 'accept-edits' })
  H.track()
  H.turn('OpenProgram create notes.txt', 1)
  H.out.v1 = H.read('notes.txt')
  H.turn('OpenProgram change notes.txt', 2)
  H.out.v2 = H.read('notes.txt')
  H.turn('OpenProgram add blob.bin', 3)
  local sid = require('openprogram').session_id()
  local list = require('openprogram.client').request_sync('openprogram/checkpoints', { sessionId = sid })
  H.out.checkpoints = list

  vim.ui.select = function(items, opts, on_choice)
    H.out.checkpoint_items = vim.tbl_map(opts.format_item, items)
    for _, cp in ipairs(items) do
      if opts.format_item(cp):find('change notes.txt', 1, true) then
        return on_choice(cp)
      end
    end
  end
  local tabs
  require('openprogram.checkpoints').pick(function(t)
    tabs = t
  end)
  H.wait(function()
    return tabs ~= nil
  end, 'checkpoint diff windows')
  H.out.tabs = #tabs
  H.out.nested_name = require('openprogram.checkpoints').side_name('src/app/main.py', 'after', 'turn: fix it')
  H.out.diff_windows = {}
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tabs[1])) do
    table.insert(H.out.diff_windows, {
      diff = vim.wo[w].diff,
      name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)),
      lines = H.lines(vim.api.nvim_win_get_buf(w)),
    })
  end

  -- A binary file has no text to diff: both sides say so.
  local btabs
  require('openprogram.checkpoints').show(list.checkpoints[1].id, function(t)
    btabs = t
  end)
  H.wait(function()
    return btabs ~= nil
  end, 'binary diff windows')
  H.out.binary_windows = {}
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(btabs[1])) do
    table.insert(H.out.binary_windows, H.lines(vim.api.nvim_win_get_buf(w)))
  end

  -- Restore the first turn's checkpoint, then undo with the safety checkpoint it names.
  local first = list.checkpoints[#list.checkpoints]
  for _, cp in ipairs(list.checkpoints) do
    if cp.kind == 'turn' and cp.id ~= list.checkpoints[1].id then
      first = cp
    end
  end
  H.out.restore_id = first.id
  local restored
  vim.cmd('OpenProgramRestore ' .. first.id)
  H.wait(function()
    for _, n in ipairs(H.notes) do
      if n:find('undo with :OpenProgramRestore') then
        restored = n
        return true
      end
    end
    return false
  end, 'restore message')
  H.out.restore_message = restored
  H.out.after_restore = H.read('notes.txt')
  local safety = restored:match(':OpenProgramRestore (%S+)$')
  H.out.safety = safety
  local n = #H.notes
  vim.cmd('OpenProgramRestore ' .. safety)
  H.wait(function()
    return #H.notes > n
  end, 'undo message')
  H.out.undo_message = H.notes[#H.notes]
  H.out.after_undo = H.read('notes.txt')
end)
