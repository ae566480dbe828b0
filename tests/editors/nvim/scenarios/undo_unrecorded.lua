-- Undo a turn that truncated a file too large to record: the file stays as the turn left it,
-- and the message names it as not restored (#31).
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ permission_mode = 'accept-edits' })
  H.track()
  H.turn('OpenProgram first', 1)
  H.turn('OpenProgram truncate data.bin', 2)
  H.out.truncated = H.read('data.bin')
  local before = #H.notes
  vim.cmd('OpenProgramUndo')
  H.wait(function()
    return #H.notes > before
  end, 'the undo message')
  H.out.undo_note = H.notes[#H.notes]
  H.out.after_undo = H.read('data.bin')
end)
