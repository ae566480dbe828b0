--[[
Shared by the scenarios that pytest runs in a headless Neovim: reads the test's parameters from
the environment, records what happened, bounds every wait, and writes one JSON result file.

  local H = dofile(os.getenv('OP_HARNESS'))
  H.run(function() ... H.out.lines = H.panel_lines() ... end)
]]

local H = { out = {}, turns = 0, events = {}, notes = {}, progress = {} }

H.result_path = assert(os.getenv('OP_RESULT'), 'OP_RESULT is not set')
H.server_cmd = vim.json.decode((assert(os.getenv('OP_SERVER_CMD'), 'OP_SERVER_CMD is not set')))
H.model = os.getenv('OP_MODEL')
H.timeout = tonumber(os.getenv('OP_WAIT_MS') or '') or 30000

if os.getenv('OP_AS_010') == '1' then
  -- Take the plugin's Neovim 0.10 code paths (vim.lsp.start_client, client.request(...)), which
  -- 0.11 still serves through its compatibility shims. Set before any plugin module loads.
  local has = vim.fn.has
  vim.fn.has = function(feature)
    if feature == 'nvim-0.11' then
      return 0
    end
    return has(feature)
  end
end

--- Wait until `cond()` is true or fail the scenario naming `what`.
---@param cond fun(): boolean
---@param what string
---@param ms? integer
function H.wait(cond, what, ms)
  if not vim.wait(ms or H.timeout, cond, 20) then
    error('timed out waiting for ' .. what, 2)
  end
end

--- Lines of a buffer.
---@param buf integer
---@return string[]
function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- The panel buffer's lines.
---@return string[]
function H.panel_lines()
  return H.lines(require('openprogram.panel').state.buf)
end

--- Content of a file in the workspace (nil when absent).
---@param path string
---@return string?
function H.read(path)
  local f = io.open(path, 'r')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

--- Plugin setup with the test's server command and model, plus `extra` options.
---@param extra? table
function H.setup(extra)
  -- Scenarios answer approvals through a vim.ui.select stub unless they ask for the float.
  require('openprogram').setup(vim.tbl_deep_extend('force',
    { cmd = H.server_cmd, model = H.model, approvals = { ui = 'select' },
      -- scenarios about something else are not asked whether a switch moves the code
      switch_code = 'never', blame = { attach = false } }, extra or {}))
end

--- Count finished turns and record every event and LSP progress report of our client.
function H.track()
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramTurnDone',
    callback = function()
      H.turns = H.turns + 1
    end,
  })
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      table.insert(H.events, a.data.type)
    end,
  })
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(a)
      local v = ((a.data or {}).params or {}).value or {}
      table.insert(H.progress, v.kind or '?')
    end,
  })
  -- Record messages; in a headless run an error message inside :command would be raised.
  vim.notify = function(msg)
    table.insert(H.notes, msg)
  end
end

--- Run a command-line command and wait for the n-th finished turn.
---@param cmd string
---@param n integer
function H.turn(cmd, n)
  vim.cmd(cmd)
  H.wait(function()
    return H.turns >= n
  end, 'turn ' .. n .. ' after ' .. cmd)
end

--- Write the result so far as a success (for a scenario that ends by quitting Neovim itself).
function H.flush()
  H.out.ok = true
  H.out.events = H.events
  H.out.notes = H.notes
  H.out.progress = H.progress
  local f = assert(io.open(H.result_path, 'w'))
  f:write(vim.json.encode(H.out))
  f:close()
end

--- Keys as if typed (termcodes replaced), executed now.
---@param keys string
---@param stay_in_insert? boolean leave Insert mode on when the keys end in it
function H.feed(keys, stay_in_insert)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true),
    stay_in_insert and 'xt!' or 'xt', false)
end

--- Run the scenario, then write the JSON result and quit (always, even on error).
---@param fn fun()
function H.run(fn)
  local ok, err = xpcall(fn, debug.traceback)
  H.out.ok = ok
  H.out.error = (not ok) and tostring(err) or nil
  H.out.events = H.events
  H.out.notes = H.notes
  H.out.progress = H.progress
  local f = assert(io.open(H.result_path, 'w'))
  f:write(vim.json.encode(H.out))
  f:close()
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop()
  end
  vim.wait(3000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  vim.cmd('qa!')
end


--- The user's own Python language server, as their config would start it (pylsp on FileType),
--- and a Python file opened so it is running before the agent's turn.
function H.start_pylsp(file)
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'python',
    callback = function(a)
      vim.lsp.start({ name = 'pylsp', cmd = { 'pylsp' }, root_dir = vim.fn.getcwd() },
        { bufnr = a.buf })
    end,
  })
  vim.cmd('edit ' .. file)
  H.wait(function()
    return #vim.lsp.get_clients({ name = 'pylsp' }) > 0
  end, 'pylsp')
end

return H
