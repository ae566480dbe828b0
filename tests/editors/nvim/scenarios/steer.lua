-- Steering a running turn from the panel: a message sent while the turn runs goes in with
-- openprogram/steer; the model sees it after the current tool call, and the redraw from history
-- shows it where it happened (metadata.interjections): after the first step's tool call, before
-- the next step's text.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  local steered = false
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'text.delta' and not steered then
        steered = true
        vim.schedule(function()
          -- The panel's input while a turn runs: the message steers it.
          require('openprogram').send('use tabs, not spaces')
        end)
      elseif a.data.type == 'turn.finished' then
        H.out.streamed = H.panel_lines()
      end
    end,
  })
  H.turn('OpenProgram reformat the file', 1)
  H.out.lines = H.panel_lines()
  H.out.history = require('openprogram.client').request_sync('openprogram/history',
    { sessionId = require('openprogram').session_id() })
end)
