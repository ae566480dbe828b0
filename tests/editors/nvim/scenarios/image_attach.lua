-- :OpenProgramImage attaches an image file (from the workspace, and from outside it) to the next
-- message, and with no file the clipboard's image, read through the `clipboard_image` command (a
-- stand-in for wl-paste here); a missing file or an empty clipboard is a note, nothing queued.
-- The transcript names each image while streaming and, after the redraw from history, with its
-- dimensions and size.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ clipboard_image = { 'sh', '-c', 'cat -- "$OP_CLIPBOARD"' } })
  H.track()
  local attach = require('openprogram.attach')
  vim.cmd('OpenProgramImage missing.png')
  vim.env.OP_CLIPBOARD = 'nothing-copied' -- the stand-in fails, as wl-paste does when empty
  vim.cmd('OpenProgramImage')
  H.out.queued_after_missing = #attach.pending
  H.out.missing_lines = H.panel_lines()
  vim.cmd('OpenProgramImage shot.png')
  vim.cmd('OpenProgramImage ' .. vim.fn.fnameescape(os.getenv('OP_OUTSIDE_IMAGE')))
  vim.env.OP_CLIPBOARD = os.getenv('OP_CLIPBOARD_IMAGE')
  vim.cmd('OpenProgramImage')
  H.out.pasted = attach.pending[#attach.pending].name
  H.turn('OpenProgram what do these show?', 1)
  local S = require('openprogram.panel').state
  H.wait(function()
    return not S.busy and table.concat(H.panel_lines(), '\n'):find('%[image paste%-1.png 7x5') ~= nil
  end, 'the redraw from history')
  H.out.lines = H.panel_lines()
end)
