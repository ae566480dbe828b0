-- Undo a turn from the checkpoint view: the diff tab's `X` puts the turn's files back as they
-- were before it (one restore), `U` undoes that; `:OpenProgramUndo` undoes the newest turn.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ permission_mode = 'accept-edits' })
  H.track()
  H.turn('OpenProgram create notes.txt', 1)
  H.turn('OpenProgram change notes.txt', 2)
  H.out.v2 = H.read('notes.txt')
  local sid = require('openprogram').session_id()
  local list = require('openprogram.client').request_sync('openprogram/checkpoints', { sessionId = sid })
  local newest = list.checkpoints[1]
  local tabs
  require('openprogram.checkpoints').show(newest.id, function(t)
    tabs = t
  end)
  H.wait(function()
    return tabs ~= nil and #tabs > 0
  end, 'the diff tab of the newest turn')
  H.out.winbar = vim.wo.winbar
  local undone = #H.notes
  vim.cmd.normal('X') -- undo this turn
  -- (a restore moves the file aside before it links the new one: nil is that moment, not
  -- the end)
  H.wait(function()
    local now = H.read('notes.txt')
    return now ~= nil and now ~= H.out.v2
  end, 'the turn to be undone')
  H.out.after_undo = H.read('notes.txt')
  H.wait(function()
    return #H.notes > undone
  end, 'the undo message')
  H.out.undo_note = H.notes[#H.notes]
  vim.cmd.normal('U') -- and undo the undo
  H.wait(function()
    return H.read('notes.txt') == H.out.v2
  end, 'the undo to be undone')
  -- the command: the newest turn of the panel's session, without an id
  H.out.before_cmd = #H.notes
  vim.cmd('OpenProgramUndo')
  H.wait(function()
    local now = H.read('notes.txt')
    return now ~= nil and now ~= H.out.v2
  end, ':OpenProgramUndo')
  H.out.after_cmd = H.read('notes.txt')
  H.out.panel = H.panel_lines()
end)
