-- The agent's navigation tools answered by the user's own language server (pylsp, started by
-- vim.lsp.start on FileType as a user's config would): definition and references across files.
-- Then symbol attachments from the same server: the symbol under the cursor, and one picked
-- from the buffer's symbols when the cursor is in none, go with the next message.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  H.start_pylsp('notes.py')
  H.turn('OpenProgram where is greet', 1)
  H.out.lines = H.panel_lines()

  vim.cmd('wincmd p')
  vim.cmd('edit lib.py')
  local lib = vim.api.nvim_get_current_buf()
  H.wait(function()
    return #vim.lsp.get_clients({ bufnr = lib, name = 'pylsp' }) > 0
  end, 'pylsp on lib.py')
  vim.api.nvim_win_set_cursor(0, { 2, 6 }) -- in the body of greet
  local got
  require('openprogram').symbol(nil, function(item)
    got = item or false
  end)
  H.wait(function()
    return got ~= nil
  end, 'the symbol under the cursor')
  H.out.under_cursor = got
  vim.cmd('wincmd p')
  vim.cmd('edit lib.py')
  vim.api.nvim_win_set_cursor(0, { 3, 0 }) -- the blank line between the two: in no symbol
  vim.ui.select = function(items, opts, on_choice)
    H.out.symbol_items = vim.tbl_map(opts.format_item, items)
    for _, s in ipairs(items) do
      if s.name == 'VERSION' then
        return on_choice(s)
      end
    end
    on_choice(nil)
  end
  got = nil
  require('openprogram').symbol(nil, function(item)
    got = item or false
  end)
  H.wait(function()
    return got ~= nil
  end, 'the picked symbol')
  H.out.picked = got
  H.out.pending = vim.tbl_map(require('openprogram.attach').label, require('openprogram.attach').pending)
  H.turn('OpenProgram explain these', 2)
end)
