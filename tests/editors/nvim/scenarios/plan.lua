-- The agent's to-do list: a checklist under each todo_write line while the turn streams, and
-- the same after the redraw from history.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  H.out.streamed = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'plan.updated' then
        -- fired once the panel has drawn the event: the panel as of this plan
        table.insert(H.out.streamed, H.panel_lines())
      end
    end,
  })
  H.turn('OpenProgram plan it', 1)
  H.out.lines = H.panel_lines()
end)
