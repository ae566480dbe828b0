-- A day with the panel open: a float layout toggled open and shut, a multi-line message typed in
-- the input (<C-j> breaks the line, <CR> sends from insert mode), <C-c> in insert mode cancels
-- with one press, the mode picker switches to accept-edits (the winbar says so and the next edit
-- runs unasked), and an unsent draft never blocks :qa.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ panel = { position = 'float', width = 0.7, height = 0.8 } })
  H.track()
  local panel = require('openprogram.panel')
  local S = panel.state
  local asked = 0
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == 'openprogram.permission' then
      asked = asked + 1
      return on_choice(items[1])
    elseif opts.kind == 'openprogram.mode' then
      H.out.mode_items = vim.tbl_map(opts.format_item, items)
      for _, m in ipairs(items) do
        if m == 'accept-edits' then
          return on_choice(m)
        end
      end
    end
    return select(items, opts, on_choice)
  end

  vim.cmd('OpenProgramToggle')
  local pw = vim.fn.win_findbuf(S.buf)[1]
  H.out.float = pw ~= nil and vim.api.nvim_win_get_config(pw).relative == 'editor'
  H.out.input_float = vim.api.nvim_win_get_config(vim.fn.win_findbuf(S.input_buf)[1]).relative == 'editor'
  H.out.input_focused = vim.api.nvim_get_current_buf() == S.input_buf
  H.out.input_buftype = vim.bo[S.input_buf].buftype
  require('openprogram.client').ensure()

  -- A message over two lines, the second indented: typed, then sent with <CR> in insert mode.
  H.feed('ifirst line<C-j>    indented   second<CR>')
  H.wait(function()
    return H.turns >= 1
  end, 'the multi-line message to be answered')
  local hist = require('openprogram.client').request_sync('openprogram/history', { sessionId = S.session_id })
  H.out.sent = hist and hist.nodes[1] and hist.nodes[1].text
  H.out.input_after_send = H.lines(S.input_buf)

  -- A slow reply, cancelled with a single <C-c> while still in insert mode.
  local deltas = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'text.delta' then
        deltas = deltas + 1
      end
    end,
  })
  local last
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramTurnDone',
    callback = function(a)
      last = a.data
    end,
  })
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(S.input_buf)[1])
  H.feed('itell me a long story<CR>')
  H.wait(function()
    return deltas > 0
  end, 'the slow reply to stream')
  -- One <C-c> typed in Insert mode (the keys enter Insert mode first).
  H.feed('a<C-c>')
  H.wait(function()
    return H.turns >= 2
  end, 'the cancel after one <C-c>')
  H.out.cancel_status = last and last.status

  -- Permission mode from the picker: the winbar shows it and the next edit is not asked.
  vim.cmd('OpenProgramMode')
  H.wait(function()
    return (vim.wo[pw].winbar or ''):find('mode accept-edits', 1, true) ~= nil
  end, 'the mode in the winbar')
  H.out.winbar = vim.wo[pw].winbar
  H.turn('OpenProgram write notes.md', 3)
  H.out.asked = asked
  H.out.file = H.read('notes.md')
  H.out.winbar_after = vim.wo[pw].winbar

  vim.cmd('OpenProgramToggle')
  H.out.visible_after_toggle = panel.visible()

  -- An unsent draft in the input, the panel closed: :qa still quits.
  vim.api.nvim_buf_set_lines(S.input_buf, 0, -1, false, { 'an unsent draft' })
  H.out.draft_modified = vim.bo[S.input_buf].modified
  H.flush()
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop()
  end
  vim.wait(3000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  local ok, err = pcall(vim.cmd, 'qa')
  H.out.qa_error = ok and nil or tostring(err)
  error('still running after :qa: ' .. tostring(err))
end)
