-- #31: an agent write into a buffer with unsaved changes is part of the turn. `/undo` takes the
-- agent's change back out of the buffer (the user's unsaved line stays, the disk is untouched),
-- `U` redoes it, and once saved the agent's lines carry its blame (code lens, hover).
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ permission_mode = 'accept-edits', blame = { attach = true } })
  H.track()
  vim.cmd('edit src/util.py')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '# mine, unsaved' })
  H.turn('OpenProgram write src/util.py', 1)
  H.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == '    return 2'
  end, 'the agent edit in the buffer')
  H.out.after_turn = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  H.out.disk_after_turn = H.read('src/util.py')
  local sid = require('openprogram').session_id()
  H.out.checkpoints = require('openprogram.client').request_sync('openprogram/checkpoints', { sessionId = sid })

  -- /undo, typed in the panel's input
  local panel = require('openprogram.panel')
  panel.open(true)
  local n = #H.notes
  vim.api.nvim_buf_set_lines(panel.state.input_buf, 0, -1, false, { '/undo' })
  require('openprogram.input').submit(panel.state.input_buf)
  H.wait(function()
    return #H.notes > n
  end, 'the /undo message')
  H.out.undo_note = H.notes[#H.notes]
  H.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == '    return 1'
  end, 'the undo in the buffer')
  H.out.after_undo = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  H.out.modified_after_undo = vim.bo[buf].modified
  H.out.disk_after_undo = H.read('src/util.py')

  -- U: the undo is undone, through the buffer again
  require('openprogram.checkpoints').undo_last()
  H.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == '    return 2'
  end, 'the redo in the buffer')
  H.out.after_redo = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

  -- saved: blame knows the agent's line
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent write')
  end)
  local lenses = {}
  for _ = 1, 20 do
    vim.lsp.codelens.refresh({ bufnr = buf })
    if vim.wait(500, function()
      return #vim.lsp.codelens.get(buf) > 0
    end, 20) then
      break
    end
  end
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(lenses, { line = l.range.start.line, title = l.command and l.command.title or '' })
  end
  H.out.lenses = lenses
  H.out.disk_saved = H.read('src/util.py')
end)
