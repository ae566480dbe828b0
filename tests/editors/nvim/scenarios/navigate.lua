-- The agent's navigation tools answered by the user's own language server (pylsp, started by
-- vim.lsp.start on FileType as a user's config would): definition and references across files.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'python',
    callback = function(a)
      vim.lsp.start({ name = 'pylsp', cmd = { 'pylsp' }, root_dir = vim.fn.getcwd() },
        { bufnr = a.buf })
    end,
  })
  vim.cmd('edit notes.py')
  H.wait(function()
    return #vim.lsp.get_clients({ name = 'pylsp' }) > 0
  end, 'pylsp')
  H.turn('OpenProgram where is greet', 1)
  H.out.lines = H.panel_lines()
end)
