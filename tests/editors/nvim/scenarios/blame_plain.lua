-- No plugin: a plain vim.lsp.start, and Neovim's own code lens and hover support on a file the
-- agent wrote.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  local id = vim.lsp.start({
    name = 'plain',
    cmd = H.server_cmd,
    root_dir = vim.fn.getcwd(),
    init_options = { model = H.model, permissionMode = 'bypass' },
  }, { attach = false })
  local c = assert(vim.lsp.get_client_by_id(assert(id, 'vim.lsp.start failed')))
  H.wait(function()
    return c.initialized == true
  end, 'initialize')
  local done = false
  c:request('openprogram/chat', { text = 'write f.txt\nfirst line\nsecond line' }, function()
    done = true
  end)
  H.wait(function()
    return done
  end, 'openprogram/chat')
  vim.cmd('edit f.txt')
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, c.id)
  H.out.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for _ = 1, 20 do
    vim.lsp.codelens.refresh({ bufnr = buf })
    if vim.wait(500, function()
      return #vim.lsp.codelens.get(buf) > 0
    end, 20) then
      break
    end
  end
  H.out.lenses = vim.tbl_map(function(l)
    return l.command and l.command.title or ''
  end, vim.lsp.codelens.get(buf))
  local res = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 1, character = 0 } }, 10000)
  for _, r in pairs(res or {}) do
    if r.result then
      H.out.hover = r.result.contents.value
    end
  end
end)
