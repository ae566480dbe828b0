-- With the plugin: a file already open with unsaved edits when the server starts. The agent
-- reads the buffer as shown, and its edit goes into the buffer (workspace/applyEdit) next to
-- the user's unsaved line; the disk keeps the saved text.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ blame = { attach = true } })
  H.track()
  vim.ui.select = function(items, opts, on_choice)
    for _, it in ipairs(items) do
      if (opts.format_item and opts.format_item(it) or it) == 'Allow once' then
        return on_choice(it)
      end
    end
    on_choice(nil)
  end
  vim.cmd('edit calc.py')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '# mine, unsaved' })
  H.turn('OpenProgram fix add', 1) -- starts the server: the open buffer is attached first
  H.out.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  H.out.modified = vim.bo[buf].modified
  H.out.disk = H.read('calc.py')
  H.out.panel = H.panel_lines()
end)
