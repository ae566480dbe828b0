-- Approvals in our own float: it opens while the user types in another buffer without taking
-- the cursor (the typed text stays in that buffer and answers nothing), shows the whole 25-line
-- diff with the four options, is answered after :OpenProgramApproval, and a request the server
-- withdraws (approval timeout) closes its float so no late answer can be given. Between them,
-- an edit of three hunks is reviewed hunk by hunk (the float's review choice opens a tab; ga/gr
-- decide, gs with one undecided refuses, q goes back with the decisions kept, :w submits) and
-- only the accepted hunks are written.
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

  -- per-hunk review of a three-hunk edit: accept 0, reject 1, accept 2
  vim.cmd('OpenProgram edit the big file')
  vim.api.nvim_set_current_win(mine_win)
  H.wait(function()
    return fl.current() ~= nil
  end, 'the edit approval')
  local r3 = fl.queue[1]
  local review_n = #r3.params.options + 1
  H.out.review_choice = H.lines(r3.buf)[vim.fn.index(H.lines(r3.buf), ('[%d] Review hunk by hunk (3 hunks)…'):format(review_n)) + 1]
  H.out.float_winbar_review = vim.wo[r3.win].winbar
  vim.cmd('OpenProgramApproval')
  H.feed(tostring(review_n))
  H.out.tabs_in_review = #vim.api.nvim_list_tabpages()
  H.out.review_lines = H.lines(0)
  H.out.review_name = vim.fn.bufname()
  H.out.first_cursor = vim.api.nvim_win_get_cursor(0)[1]
  H.feed('ga')
  H.out.after_ga_cursor = vim.api.nvim_win_get_cursor(0)[1]
  H.feed('gs') -- two undecided: refused with a note
  H.out.still_open_after_gs = fl.current() ~= nil and r3.review ~= nil
  H.feed('gr')
  H.feed('q') -- back to the float, decisions kept
  H.out.back_in_float = vim.api.nvim_get_current_win() == r3.win
  H.out.tabs_after_back = #vim.api.nvim_list_tabpages()
  H.feed(tostring(review_n))
  H.out.kept = { r3.decisions[0], r3.decisions[1], r3.decisions[2] or 'none' }
  H.out.reopened_cursor = vim.api.nvim_win_get_cursor(0)[1]
  H.feed('ga')
  vim.cmd('write')
  H.wait(function()
    return H.turns >= 2
  end, 'the reviewed turn')
  H.out.reviewed = H.read('big.txt')
  H.out.tabs_at_end = #vim.api.nvim_list_tabpages()
  H.out.panel_after_review = H.panel_lines()
  -- quoted lines (notes, checkpoints) are italic by highlight, whatever they contain
  local panel = require('openprogram.panel')
  panel.note('approval asked: Write hello_world.py with `run_command`')
  local pbuf = panel.state.buf
  local marks = vim.api.nvim_buf_get_extmarks(pbuf, vim.api.nvim_create_namespace('openprogram.quotes'), 0, -1,
    { details = true })
  H.out.quote_marks = vim.tbl_map(function(m)
    return { H.lines(pbuf)[m[2] + 1], m[4].hl_group, m[4].end_col }
  end, marks)
  H.out.quoted = vim.tbl_filter(function(l)
    return l:sub(1, 1) == '>'
  end, H.panel_lines())
  H.out.note_italic = vim.api.nvim_get_hl(0, { name = 'OpenProgramNote' }).italic

  -- a second request left unanswered while its hunk review is open: the server withdraws it and
  -- the float and the review tab go. Its timeout is a setting changed on the running server
  -- (3 s: the float opens within ~20 ms idle, the review at once)
  require('openprogram.config').options.approval_timeout = 3
  require('openprogram.client').find():notify('workspace/didChangeConfiguration',
    { settings = { openprogram = { approvalTimeout = 3 } } })
  vim.cmd('OpenProgram write another')
  vim.api.nvim_set_current_win(mine_win)
  H.wait(function()
    return fl.current() ~= nil
  end, 'the second float')
  local r2 = fl.queue[1]
  vim.cmd('OpenProgramApproval')
  H.feed(tostring(#r2.params.options + 1))
  H.out.review_open = r2.review ~= nil and #vim.api.nvim_list_tabpages() == 2
  H.wait(function()
    return H.turns >= 3
  end, 'the withdrawn turn', 20000)
  H.out.review_closed = #vim.api.nvim_list_tabpages() == 1 and vim.fn.bufnr('Review other.txt') == -1
  H.out.float_closed = not (r2.win and vim.api.nvim_win_is_valid(r2.win)) and fl.current() == nil
  H.out.queue = #fl.queue
  H.out.other = H.read('other.txt')
end)
