-- The openprogram-lsp server as a `vim.lsp.Config` (Neovim 0.11+):
--   vim.lsp.enable('openprogram')
-- Options come from require('openprogram').setup(); override with vim.lsp.config('openprogram', {...}).

---@type vim.lsp.Config
local cfg = require('openprogram.client').lsp_config()
cfg.name = nil -- vim.lsp.enable names the client after this file
cfg.root_dir = function(bufnr, on_dir)
  on_dir(vim.fs.root(bufnr, require('openprogram.config').options.root_markers) or vim.fn.getcwd())
end
return cfg
