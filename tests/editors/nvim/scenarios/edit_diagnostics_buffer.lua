-- The file is open with unsaved changes: the agent's edit goes into the buffer (applyEdit), the
-- user's pylsp checks the buffer, and the tool result names the new error with its line.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ blame = { attach = true } }) -- the plugin's client attaches to file buffers
  H.track()
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'python',
    callback = function(a)
      vim.lsp.start({ name = 'pylsp', cmd = { 'pylsp' }, root_dir = vim.fn.getcwd() },
        { bufnr = a.buf })
    end,
  })
  vim.ui.select = function(items, opts, on_choice)
    for _, it in ipairs(items) do
      if (opts.format_item and opts.format_item(it) or it) == 'Allow once' then
        return on_choice(it)
      end
    end
    on_choice(nil)
  end
  vim.cmd('edit app.py')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# mine, unsaved' })
  H.wait(function()
    return #vim.lsp.get_clients({ name = 'pylsp' }) > 0 and #vim.diagnostic.get(buf) > 0
  end, 'pylsp')
  H.turn('OpenProgram fix main', 1)
  H.out.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  H.out.modified = vim.bo[buf].modified
end)
