-- The agent's navigation tools answered by the user's own language server (pylsp, started by
-- vim.lsp.start on FileType as a user's config would): definition and references across files.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  H.start_pylsp('notes.py')
  H.turn('OpenProgram where is greet', 1)
  H.out.lines = H.panel_lines()
end)
