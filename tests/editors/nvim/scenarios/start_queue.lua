-- A message sent right after start: the command returns at once (the server has not answered
-- `initialize` yet: nothing waits for it), the panel's winbar says "starting…", an `:echo`
-- runs meanwhile, and the message is sent once the server is ready, exactly once.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  local client = require('openprogram.client')
  vim.cmd('OpenProgram hello before ready')
  local c = assert(client.find(), 'a client was started')
  H.out.initialized_after_send = c.initialized == true
  H.out.queued = #(client.queued[c.id] or {})
  local pbuf = require('openprogram.panel').state.buf
  H.out.winbar = vim.wo[vim.fn.win_findbuf(pbuf)[1]].winbar
  vim.cmd('echo "ping"')
  H.out.echo_while_starting = client.starting(c)
  H.wait(function()
    return H.turns >= 1
  end, 'the queued turn')
  H.out.queued_after = #(client.queued[c.id] or {})
  H.out.winbar_after = vim.wo[vim.fn.win_findbuf(pbuf)[1]].winbar
  H.out.lines = H.panel_lines()
  H.out.history = client.request_sync('openprogram/history',
    { sessionId = require('openprogram').session_id() })
end)
