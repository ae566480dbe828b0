-- A wrong server command: a clear message in the panel and in :checkhealth, no hang.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ cmd = { '/nonexistent/openprogram-lsp', 'serve' } })
  H.track()
  vim.cmd('OpenProgram hello?')
  H.out.lines = H.panel_lines()
  H.out.busy = require('openprogram.panel').state.busy
  vim.cmd('checkhealth openprogram')
  H.out.report = H.lines(vim.api.nvim_get_current_buf())
end)
