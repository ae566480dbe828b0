-- The server stops in the middle of a turn: the panel ends the turn and says so.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  local deltas = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'text.delta' then
        deltas = deltas + 1
      end
    end,
  })
  vim.cmd('OpenProgram a slow answer please')
  H.wait(function()
    return deltas > 0
  end, 'streaming')
  require('openprogram.client').find():stop(true)
  H.wait(function()
    return H.turns >= 1
  end, 'the panel to end the turn')
  H.out.busy = require('openprogram.panel').state.busy
  H.out.lines = H.panel_lines()
end)
