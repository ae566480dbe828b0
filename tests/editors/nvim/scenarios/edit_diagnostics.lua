-- The user's own language server (pylsp with pyflakes, started by vim.lsp.start on FileType as a
-- user's config would) checks Python files. The agent edits a file no buffer holds: the plugin
-- loads it, the server checks it before and after, and the tool result names the new error.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  -- the user works on another Python file: their server is running when the agent starts
  H.start_pylsp('other.py')
  vim.ui.select = function(items, opts, on_choice)
    for _, it in ipairs(items) do
      if (opts.format_item and opts.format_item(it) or it) == 'Allow once' then
        return on_choice(it)
      end
    end
    on_choice(nil)
  end
  H.turn('OpenProgram fix main', 1)
  local buf = vim.fn.bufnr('app.py')
  H.out.loaded = buf ~= -1 and vim.api.nvim_buf_is_loaded(buf)
  H.out.lines = H.panel_lines()

end)
