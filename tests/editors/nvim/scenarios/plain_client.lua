-- No plugin: `nvim -u NONE`, plain vim.lsp.start, no experimental capability. The approval arrives
-- as window/showMessageRequest through Neovim's own handler, which asks vim.ui.select.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.out.requests = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(H.out.requests, { prompt = opts.prompt, kind = opts.kind, titles = vim.tbl_map(function(a)
      return a.title
    end, items) })
    for _, a in ipairs(items) do
      if a.title == 'Allow once' then
        return on_choice(a)
      end
    end
    on_choice(nil)
  end
  local events = {}
  local id = vim.lsp.start({
    name = 'plain',
    cmd = H.server_cmd,
    root_dir = vim.fn.getcwd(),
    init_options = { model = H.model },
    handlers = {
      ['openprogram/event'] = function(_, params)
        table.insert(events, params.type)
      end,
    },
  }, { attach = false })
  local c = assert(vim.lsp.get_client_by_id(assert(id, 'vim.lsp.start failed')))
  H.wait(function()
    return c.initialized == true
  end, 'initialize')
  H.out.experimental = c.config.capabilities and c.config.capabilities.experimental or vim.NIL
  local done, result, err = false, nil, nil
  c:request('openprogram/chat', { text = 'write plain.txt' }, function(e, r)
    done, result, err = true, r, e
  end)
  H.wait(function()
    return done
  end, 'openprogram/chat')
  H.out.result = result
  H.out.err = err
  H.out.file = H.read('plain.txt')
  H.out.plain_events = events
end)
