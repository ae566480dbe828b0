-- Benchmark helper: edit turns of two plain clients in one Neovim, each with its own server and
-- both answering openprogram/diagnostics (the plugin's handler) with pylsp checking the files;
-- one server runs with [diagnostics] after_edits = "errors", the other "off". The turns
-- alternate A B A B so machine load falls on both alike.
local H = dofile(os.getenv('OP_HARNESS'))
local n = tonumber(os.getenv('OP_BENCH_TURNS') or '8')

local function now()
  return vim.uv.hrtime() / 1e6
end

H.run(function()
  H.setup()
  H.start_pylsp('notes.py')
  local function client(name, model, level)
    local caps = vim.lsp.protocol.make_client_capabilities()
    caps.experimental = { openprogram = { diagnostics = true } }
    local env = vim.fn.environ()
    env.OPENPROGRAM_DIAGNOSTICS_AFTER_EDITS = level
    local id = vim.lsp.start({ name = name, cmd = H.server_cmd, root_dir = vim.fn.getcwd(),
      cmd_env = env, capabilities = caps,
      handlers = { ['openprogram/diagnostics'] = function(_, params, ctx)
        return require('openprogram.diagnostics').handle(params, ctx)
      end },
      init_options = { model = model, permissionMode = 'bypass' } }, { attach = false })
    local c = assert(vim.lsp.get_client_by_id(assert(id)))
    H.wait(function()
      return c.initialized == true
    end, name .. ' initialize')
    return c
  end
  local on = client('bench-on', os.getenv('OP_MODEL_ON'), 'errors')
  local off = client('bench-off', os.getenv('OP_MODEL_OFF'), 'off')
  H.out.on_ms, H.out.off_ms, H.out.on_outputs = {}, {}, {}
  local sids = {}
  local function turn(c, key, i)
    local done, res = false, nil
    local t0 = now()
    c:request('openprogram/chat', { text = 'edit ' .. i, sessionId = sids[key] }, function(_, r)
      done, res = true, r
    end)
    H.wait(function()
      return done
    end, key .. ' turn ' .. i)
    table.insert(H.out[key .. '_ms'], now() - t0)
    sids[key] = res and res.sessionId
  end
  for i = 1, n do
    turn(on, 'on', i)
    turn(off, 'off', i)
  end
end)
