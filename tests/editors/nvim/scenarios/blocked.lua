-- A tool call refused by a user's PreToolUse hook: the panel's tool line says why, while the
-- turn streams and after the redraw from history.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'tool.finished' then
        H.out.streamed = H.panel_lines() -- the panel as of this event (drawn before it fires)
      end
    end,
  })
  H.turn('OpenProgram run it', 1)
  H.out.lines = H.panel_lines()
end)
