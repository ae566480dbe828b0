-- :checkhealth openprogram reports the server version, the sandbox, the model and Neovim's version.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  vim.cmd('checkhealth openprogram')
  H.out.report = H.lines(vim.api.nvim_get_current_buf())
end)
