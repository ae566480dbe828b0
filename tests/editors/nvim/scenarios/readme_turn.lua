-- Run after the README's minimal init.lua (no H.setup here): one turn through :OpenProgram.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.track()
  H.out.enabled = vim.lsp.is_enabled and vim.lsp.is_enabled('openprogram') or nil
  H.turn('OpenProgram hello from the README', 1)
  H.out.lines = H.panel_lines()
  H.out.help = #vim.api.nvim_get_runtime_file('doc/openprogram.txt', false)
end)
