-- :OpenProgram with a scripted model that writes a file; the approval arrives through
-- vim.ui.select, answered by a chooser that picks "Allow once".
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  H.out.prompts, H.out.items, H.out.diff = {}, {}, {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(H.out.prompts, opts.prompt)
    local names = {}
    for _, it in ipairs(items) do
      table.insert(names, opts.format_item and opts.format_item(it) or tostring(it))
    end
    table.insert(H.out.items, names)
    -- The edit's diff is on screen while the choice is pending.
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      local b = vim.api.nvim_win_get_buf(w)
      if vim.bo[b].filetype == 'diff' then
        H.out.diff = H.lines(b)
      end
    end
    vim.defer_fn(function()
      for _, it in ipairs(items) do
        if (opts.format_item and opts.format_item(it) or it) == 'Allow once' then
          return on_choice(it)
        end
      end
      on_choice(nil)
    end, 50)
  end

  H.turn('OpenProgram write hello.txt please', 1)
  H.out.file = H.read('hello.txt')
  H.out.lines = H.panel_lines()
  H.out.session = require('openprogram').session_id()
  local panel = require('openprogram.panel')
  H.out.panel_windows = #vim.fn.win_findbuf(panel.state.buf)
  local pw = vim.fn.win_findbuf(panel.state.buf)[1]
  H.wait(function()
    return vim.wo[pw].winbar:find('write hello.txt please', 1, true) ~= nil
  end, 'the session title in the winbar')
  H.out.winbar = vim.wo[pw].winbar
  H.out.input_buftype = vim.bo[panel.state.input_buf].buftype
  local c = require('openprogram.client').find()
  H.out.experimental = c and c.config.capabilities.experimental or nil
  H.out.init_options = c and c.config.init_options or nil
  H.out.diff_open_after = false
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.bo[vim.api.nvim_win_get_buf(w)].filetype == 'diff' then
      H.out.diff_open_after = true
    end
  end

  -- A second message through the prompt buffer: type it and press Enter.
  local iw = vim.fn.win_findbuf(panel.state.input_buf)[1]
  vim.api.nvim_set_current_win(iw)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('Athanks<CR>', true, false, true), 'xt', false)
  H.wait(function()
    return H.turns >= 2
  end, 'the turn sent from the input buffer')
  H.out.lines2 = H.panel_lines()
end)
