-- The model's thoughts: one collapsed line per thought while the turn streams and after the
-- redraw from history, the reply never holding them; gT opens them in a float.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  H.out.streamed = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'thought.delta' or a.data.type == 'text.delta' then
        -- fired once the panel has drawn the event: the panel as of this delta
        table.insert(H.out.streamed, H.panel_lines())
      end
    end,
  })
  H.turn('OpenProgram think first', 1)
  H.out.lines = H.panel_lines()
  local panel = require('openprogram.panel')
  local win = vim.fn.win_findbuf(panel.state.buf)[1]
  vim.api.nvim_set_current_win(win)
  for i, line in ipairs(H.out.lines) do
    if line:find('^## Assistant') then
      vim.api.nvim_win_set_cursor(win, { i + 1, 0 })
    end
  end
  local float = panel.show_thoughts()
  H.out.float = float and H.lines(vim.api.nvim_win_get_buf(float)) or {}
end)
