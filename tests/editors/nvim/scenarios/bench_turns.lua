-- Benchmark helper: turns through the plugin panel (:OpenProgram: streamed, redrawn from
-- history) alternating with turns through a plain vim.lsp client request, each client with its
-- own server, same model; alternating keeps machine load even between the two.
local H = dofile(os.getenv('OP_HARNESS'))
local n = tonumber(os.getenv('OP_BENCH_TURNS') or '10')

local function now()
  return vim.uv.hrtime() / 1e6
end

H.run(function()
  H.setup({ permission_mode = 'bypass' })
  H.track()
  local id = vim.lsp.start({ name = 'plain', cmd = H.server_cmd, root_dir = vim.fn.getcwd(),
    init_options = { model = H.model, permissionMode = 'bypass' } }, { attach = false })
  local c = assert(vim.lsp.get_client_by_id(assert(id)))
  H.wait(function()
    return c.initialized == true
  end, 'plain initialize')
  H.out.panel_ms, H.out.plain_ms = {}, {}
  local sid
  for i = 1, n do
    local t0 = now()
    H.turn('OpenProgram panel turn ' .. i, i)
    table.insert(H.out.panel_ms, now() - t0)

    local done, res = false, nil
    t0 = now()
    c:request('openprogram/chat', { text = 'plain turn ' .. i, sessionId = sid }, function(_, r)
      done, res = true, r
    end)
    H.wait(function()
      return done
    end, 'plain turn ' .. i)
    table.insert(H.out.plain_ms, now() - t0)
    sid = res and res.sessionId
  end
end)
