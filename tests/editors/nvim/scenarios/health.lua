-- :checkhealth openprogram reports the server version, the sandbox, the model and Neovim's version;
-- a bad sandbox setting is reported with the server's own one-line error; a plugin of another
-- release than the server is a warning naming both versions.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  vim.cmd('checkhealth openprogram')
  H.out.report = H.lines(vim.api.nvim_get_current_buf())
  vim.env.OPENPROGRAM_SANDBOX_NETWORK = 'maybe'
  vim.cmd('checkhealth openprogram')
  H.out.bad_setting = H.lines(vim.api.nvim_get_current_buf())
  vim.env.OPENPROGRAM_SANDBOX_NETWORK = nil
  local plugin = require('openprogram')
  local own = plugin.version
  plugin.version = '9.9.9'  -- a plugin of another release than the server
  vim.cmd('checkhealth openprogram')
  H.out.mismatch = H.lines(vim.api.nvim_get_current_buf())
  plugin.version = own
end)
