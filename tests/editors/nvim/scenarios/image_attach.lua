-- :OpenProgramImage attaches an image file (from the workspace, and from outside it) to the next
-- message; a missing file is a note, nothing queued. The transcript names each image while
-- streaming and, after the redraw from history, with its dimensions and size.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  vim.cmd('OpenProgramImage missing.png')
  H.out.queued_after_missing = #require('openprogram.attach').pending
  H.out.missing_lines = H.panel_lines()
  vim.cmd('OpenProgramImage shot.png')
  vim.cmd('OpenProgramImage ' .. vim.fn.fnameescape(os.getenv('OP_OUTSIDE_IMAGE')))
  H.turn('OpenProgram what do these show?', 1)
  local S = require('openprogram.panel').state
  H.wait(function()
    return not S.busy and table.concat(H.panel_lines(), '\n'):find('%[image shot.png 6x4') ~= nil
  end, 'the redraw from history')
  H.out.lines = H.panel_lines()
end)
