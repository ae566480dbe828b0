-- No plugin: `nvim -u NONE`, a plain vim.lsp.start on a buffer with unsaved edits. The server's
-- "Fix with the agent" code action runs a turn; the approval arrives as showMessageRequest; the
-- agent's edit goes into the dirty buffer (workspace/applyEdit), never onto the disk.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.out.selects = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = vim.tbl_map(function(a)
      return type(a) == 'table' and (a.title or (a.action and a.action.title)) or tostring(a)
    end, items)
    table.insert(H.out.selects, titles)
    table.insert(H.notes, 'select: ' .. table.concat(titles, '|'))
    for i, t in ipairs(titles) do
      if t == 'Allow once' or t == 'Fix with the agent' then
        return on_choice(items[i], i)
      end
    end
    on_choice(nil)
  end
  H.out.notes = H.notes
  vim.notify = function(msg)
    table.insert(H.notes, msg)
  end
  local shown = vim.lsp.handlers['window/showMessage']
  vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
    table.insert(H.notes, 'shown: ' .. tostring(params and params.message))
    return shown(err, params, ctx)
  end
  vim.cmd('edit calc.py')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '# mine, unsaved' })
  local id = vim.lsp.start({ name = 'plain', cmd = H.server_cmd, root_dir = vim.fn.getcwd(),
    init_options = { model = H.model } })
  local c = assert(vim.lsp.get_client_by_id(assert(id, 'vim.lsp.start failed')))
  H.wait(function()
    return c.initialized == true and vim.lsp.buf_is_attached(buf, c.id)
  end, 'initialize and attach')
  -- a diagnostic as a language server publishes it (Neovim keeps the LSP form for code actions)
  vim.lsp.diagnostic.on_publish_diagnostics(nil, { uri = vim.uri_from_bufnr(buf), diagnostics = {
    { range = { start = { line = 1, character = 11 }, ['end'] = { line = 1, character = 16 } },
      message = 'add subtracts', severity = 2, source = 'lint' } } }, { client_id = c.id, method = 'textDocument/publishDiagnostics' })
  vim.api.nvim_win_set_cursor(0, { 2, 12 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(a)
      return a.title == 'Fix with the agent'
    end,
  })
  H.wait(function()
    return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'):find('a + b', 1, true) ~= nil
      and #vim.tbl_filter(function(n)
        -- the reply's own message: another one (a sandbox warning on a machine without
        -- working bubblewrap) may come first
        local s = tostring(n)
        return s:find('shown: OpenProgram:', 1, true) ~= nil and s:find('add now adds.', 1, true) ~= nil
      end, H.out.notes) > 0
  end, 'the fix in the buffer and the reply')
  H.out.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  H.out.modified = vim.bo[buf].modified
  H.out.disk = H.read('calc.py')
end)
