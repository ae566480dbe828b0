-- Attach to a running `serve --tcp` through `connect` (the run file gives port and token), drive
-- one turn in a session another editor created, and record every event of it in order.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ connect = tonumber(os.getenv('OP_CONNECT')) })
  H.track()
  local seen = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      table.insert(seen, { type = a.data.type, turn = a.data.turnId, session = a.data.sessionId })
    end,
  })
  local client = require('openprogram.client')
  local c = assert(client.ensure(), 'no connection to the running server')
  H.out.init_token = c.config.init_options.token ~= nil
  local res
  client.request('openprogram/chat', { text = 'list .', sessionId = os.getenv('OP_SESSION') }, function(err, r)
    res = r or { error = err }
  end)
  H.wait(function()
    return res ~= nil
  end, 'the turn')
  H.out.result = res
  H.wait(function()
    for _, e in ipairs(seen) do
      if e.type == 'turn.finished' and e.turn == res.assistantNodeId then
        return true
      end
    end
    return false
  end, 'turn.finished')
  H.out.seen = seen
end)
