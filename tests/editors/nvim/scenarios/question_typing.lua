-- A question (ask_user) arrives while the user types in a code window: it opens in a float of
-- its own that never takes the cursor, so `ohello world<Esc>` lands in the buffer and the
-- question stays pending; moved into (`:OpenProgramApproval`), `2` picks its second option.
-- A second question with free text only is answered through "Type an answer…" in its float.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ approvals = { ui = 'float' } })
  H.track()
  local fl = require('openprogram.approval_float')
  local async = require('openprogram.async')
  H.out.inputs = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(H.out.inputs, opts.prompt)
    on_confirm('teal')
  end
  vim.ui.select = function()
    error('vim.ui.select must not be used for a question in float mode')
  end
  vim.cmd('edit code.txt')
  local code, code_win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
  vim.cmd('OpenProgram ask me two things')
  vim.api.nvim_set_current_win(code_win)
  vim.cmd('stopinsert')
  H.wait(function()
    return fl.current() ~= nil
  end, 'the question float')
  local r = fl.queue[1]
  H.out.float_lines = H.lines(r.buf)
  H.out.float_winbar = vim.wo[r.win].winbar
  H.out.footer = vim.api.nvim_win_get_config(r.win).footer
  H.out.cur_is_code = vim.api.nvim_get_current_win() == code_win
  H.feed('ohello world<Esc>')
  H.out.code = H.lines(code)
  H.out.pending_after_typing = #async.pending
  H.out.still_open = fl.current() ~= nil
  H.out.turns_after_typing = H.turns
  vim.cmd('OpenProgramApproval')
  H.out.focused = vim.api.nvim_get_current_win() == r.win
  H.feed('2')
  H.out.back_in_code = vim.api.nvim_get_current_win() == code_win
  -- the second question: free text only
  H.wait(function()
    local q = fl.queue[1]
    return q ~= nil and q ~= r and q.win ~= nil
  end, 'the second question float')
  local r2 = fl.queue[1]
  H.out.float2_lines = H.lines(r2.buf)
  vim.cmd('OpenProgramApproval')
  H.feed('1')
  H.wait(function()
    return H.turns >= 1
  end, 'the turn')
  H.out.pending = #async.pending
  H.out.queue = #fl.queue
  H.out.lines = H.panel_lines()
  H.out.history = require('openprogram.client').request_sync('openprogram/history',
    { sessionId = require('openprogram').session_id() })
end)
