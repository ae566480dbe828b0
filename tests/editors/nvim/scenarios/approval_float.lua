-- Approvals in our own float: it opens while the user types in another buffer without taking
-- the cursor (the typed text stays in that buffer and answers nothing), shows the whole 25-line
-- diff with the four options, is answered after :OpenProgramApproval, and a request the server
-- withdraws (approval timeout) closes its float so no late answer can be given.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ approvals = { ui = 'float' }, approval_timeout = 60 })
  H.track()
  local fl = require('openprogram.approval_float')
  -- the user works in a file of their own, in Insert mode, when the approval arrives
  vim.cmd('edit mine.txt')
  local mine = vim.api.nvim_get_current_buf()
  local mine_win = vim.api.nvim_get_current_win()
  vim.cmd('OpenProgram write the big file')
  vim.api.nvim_set_current_win(mine_win)
  H.wait(function()
    return fl.current() ~= nil
  end, 'the approval float')
  H.out.current_is_mine = vim.api.nvim_get_current_buf() == mine
  H.feed('ityped while it waited<Esc>')
  H.out.mine = H.lines(mine)
  H.out.still_waiting = fl.current() ~= nil
  local r = fl.queue[1]
  H.out.float_lines = H.lines(r.buf)
  H.out.float_winbar = vim.wo[r.win].winbar
  H.out.float_height = vim.api.nvim_win_get_height(r.win)
  H.out.file_before = H.read('big.txt')
  vim.cmd('OpenProgramApproval')
  H.out.focused = vim.api.nvim_get_current_win() == r.win
  H.feed('1')
  H.wait(function()
    return H.turns >= 1
  end, 'the approved turn')
  H.out.file_after = H.read('big.txt')
  H.out.back_in = vim.api.nvim_get_current_buf() == mine

  -- a second request left unanswered: the server withdraws it and the float goes. Its timeout
  -- is a setting changed on the running server (1 s: the float opens within ~20 ms idle)
  require('openprogram.config').options.approval_timeout = 1
  require('openprogram.client').find():notify('workspace/didChangeConfiguration',
    { settings = { openprogram = { approvalTimeout = 1 } } })
  vim.cmd('OpenProgram write another')
  vim.api.nvim_set_current_win(mine_win)
  H.wait(function()
    return fl.current() ~= nil
  end, 'the second float')
  local r2 = fl.queue[1]
  H.wait(function()
    return H.turns >= 2
  end, 'the withdrawn turn', 20000)
  H.out.float_closed = not (r2.win and vim.api.nvim_win_is_valid(r2.win)) and fl.current() == nil
  H.out.queue = #fl.queue
  H.out.other = H.read('other.txt')
end)
